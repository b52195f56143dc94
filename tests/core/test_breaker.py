"""The per-trace state machine: CLOSED -> OPEN (latched) -> HALF_OPEN probe -> CLOSED, listeners, kill switch,
trip marking on ancestors, exception variants, and trace cleanup."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import spanbreaker
from spanbreaker import BreakerState, Tripped, TripRecord

from .spans import Harness, attrs, make_harness


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def loop(h: Harness, calls: int = 6) -> None:
    for _ in range(calls):
        h.tool("search", {"q": "same"}, output="nothing useful")


def test_trip_marks_the_span_its_step_its_agent_and_the_root(harness: Harness) -> None:
    with pytest.raises(Tripped), harness.agent(name="outer"), harness.step(1), harness.agent(name="inner"), \
            harness.step(1):
        for _ in range(6):  # the model asks again each time (in one step without model calls: one turn's batch)
            harness.llm()
            harness.tool("search", {"q": "same"}, output="nothing useful")
    marked = {s.name for s in harness.spans() if attrs(s).get("spanbreaker.tripped")}
    assert {"SimpleTool", "Step 1", "inner.run", "outer.run"} <= marked
    for span in harness.spans():
        if attrs(span).get("spanbreaker.tripped"):
            assert span.status.status_code.name == "ERROR"
            assert attrs(span)["spanbreaker.detector"] == "tool_repeat"
            assert any(e.name == "spanbreaker.trip" for e in span.events)


def test_every_started_span_is_exported_once_including_blocked_ones(harness: Harness) -> None:
    started: list[int] = []

    class Count(spanbreaker.BreakerSpanProcessor.__mro__[1]):  # type: ignore[misc,name-defined]
        def on_start(self, span: Any, parent_context: Any = None) -> None:
            started.append(span.context.span_id)

    harness.provider.add_span_processor(Count())
    with pytest.raises(Tripped), harness.agent():
        loop(harness)
    exported = [s.context.span_id for s in harness.spans()]
    assert sorted(exported) == sorted(set(exported))
    # the counting processor runs after the breaker and still saw every span start once, the vetoed one too
    assert sorted(started) == sorted(exported)
    assert sum(1 for s in harness.spans() if attrs(s).get("spanbreaker.blocked")) == 1


def test_open_breaker_is_latched_every_later_call_in_the_trace_is_blocked(harness: Harness) -> None:
    raised = []
    with harness.agent():
        for _ in range(8):
            try:
                harness.tool("search", {"q": "same"}, output="nothing useful")
            except Tripped as exc:  # a framework that swallows the trip...
                raised.append(exc)
        for _ in range(3):
            try:
                harness.llm()  # ...meets it again at its next model call
            except Tripped as exc:
                raised.append(exc)
    assert raised[0].blocked is False and all(exc.blocked for exc in raised[1:])
    assert len(raised) == 4 + 3  # calls 5-8 and the three model calls
    assert harness.processor.stats.trips == 1
    assert len(harness.trips) == 1


def test_other_traces_are_unaffected(harness: Harness) -> None:
    with pytest.raises(Tripped), harness.agent(name="a"):
        loop(harness)
    with harness.agent(name="b"):
        harness.tool("search", {"q": "same"}, output="nothing useful")
        harness.llm()
    assert len(harness.trips) == 1


def test_half_open_probe_closes_the_breaker_when_it_completes_cleanly() -> None:
    clock = Clock()
    changes: list[tuple[str, BreakerState, BreakerState]] = []
    h = make_harness(clock=clock, half_open_after_s=30.0,
                     on_state_change=lambda t, old, new: changes.append((t, old, new)))
    with h.agent() as root:
        with pytest.raises(Tripped):
            loop(h)
        trace_id = root.get_span_context().trace_id
        assert h.processor.state(trace_id) is BreakerState.OPEN
        with pytest.raises(Tripped):
            h.llm()
        clock.now += 31
        h.llm()  # the probe goes through and succeeds
        assert h.processor.state(trace_id) is BreakerState.CLOSED
        h.tool("search", {"q": "new question"}, output="an answer")
    assert [(old, new) for _, old, new in changes] == [
        (BreakerState.CLOSED, BreakerState.OPEN), (BreakerState.OPEN, BreakerState.HALF_OPEN),
        (BreakerState.HALF_OPEN, BreakerState.CLOSED)]


def test_half_open_probe_that_fails_reopens_and_only_one_probe_goes_through() -> None:
    clock = Clock()
    h = make_harness(clock=clock, half_open_after_s=10.0)
    with h.agent() as root:
        with pytest.raises(Tripped):
            loop(h)
        clock.now += 11
        trace_id = root.get_span_context().trace_id
        with pytest.raises(ValueError), h.tracer.start_as_current_span(
                "probe.generate", attributes={"openinference.span.kind": "LLM"}):
            assert h.processor.state(trace_id) is BreakerState.HALF_OPEN
            with pytest.raises(Tripped):  # a second call while the probe is in flight is blocked
                h.tool("other", {"x": 1})
            raise ValueError("probe failed")
        assert h.processor.state(trace_id) is BreakerState.OPEN


def test_force_open_is_a_kill_switch_and_reset_closes(harness: Harness) -> None:
    with harness.agent() as root:
        trace_id = root.get_span_context().trace_id
        record = harness.processor.force_open(f"{trace_id:032x}", reason="operator stop")
        assert record.detector == "forced"
        with pytest.raises(Tripped) as caught:
            harness.llm()
        assert caught.value.reason == "operator stop"
        harness.processor.reset(trace_id)
        harness.llm()
    assert attrs(harness.named("CodeAgent.run")[0])["spanbreaker.reason"] == "operator stop"


def test_listeners_are_called_and_a_failing_listener_never_breaks_the_app() -> None:
    seen: list[TripRecord] = []

    class Listener:
        def on_trip(self, record: TripRecord) -> None:
            seen.append(record)
            raise RuntimeError("listener bug")

        def on_state_change(self, trace_id: str, old: BreakerState, new: BreakerState) -> None:
            raise RuntimeError("listener bug")

    h = make_harness()
    h.processor.add_listener(Listener())
    with pytest.raises(Tripped) as caught, h.agent():
        loop(h)
    assert caught.value.detector == "tool_repeat"
    assert len(seen) == 1 and h.processor.stats.internal_errors >= 2


def test_observe_mode_marks_but_never_raises_and_counts_calls_after_the_trip() -> None:
    h = make_harness(mode="observe")
    with h.agent() as root:
        loop(h, calls=10)
        h.llm()
    record = h.processor.trip_record(root.get_span_context().trace_id)
    assert record is not None and record.detector == "tool_repeat"
    assert record.tool_calls_after == 5 and record.model_calls_after == 1
    assert attrs(h.named("CodeAgent.run")[0])["spanbreaker.mode"] == "observe"


def test_trace_state_is_dropped_when_the_root_ends_and_the_record_kept(harness: Harness) -> None:
    with pytest.raises(Tripped), harness.agent() as root:
        loop(harness)
    assert harness.processor.engine.traces == {}
    assert harness.processor.trip_record(root.get_span_context().trace_id) is not None


def test_traces_whose_root_never_ends_are_bounded_by_lru_and_ttl() -> None:
    clock = Clock()
    h = make_harness(max_traces=50, clock=clock, trace_ttl_s=60.0)
    for _ in range(500):
        h.tracer.start_span("leaked.run", attributes={"openinference.span.kind": "AGENT"})
    assert len(h.processor.engine.traces) <= 50
    clock.now += 120
    for _ in range(300):
        h.tracer.start_span("leaked.run", attributes={"openinference.span.kind": "AGENT"})
    assert len(h.processor.engine.traces) <= 50


def test_end_open_spans_repairs_spans_an_instrumentor_left_open(harness: Harness) -> None:
    agent = harness.tracer.start_span("CodeAgent.run", attributes={"openinference.span.kind": "AGENT"})
    trace_id = agent.get_span_context().trace_id
    assert harness.processor.end_open_spans(trace_id, "run aborted") == 1
    assert harness.named("CodeAgent.run")[0].status.status_code.name == "ERROR"


class FrameworkCancelled(Exception):
    """Stands in for a framework's own cancellation exception (Agno's RunCancelledException)."""


class FrameworkTripped(FrameworkCancelled, Tripped):
    def __init__(self, detector: str, reason: str, trace_id: str, evidence: Any = None, blocked: bool = False):
        Tripped.__init__(self, detector, reason, trace_id, evidence, blocked)


def test_registered_variant_is_raised_for_its_scope_and_caught_as_tripped() -> None:
    spanbreaker.register_trip_exception("test.framework", FrameworkTripped)
    h = make_harness()
    tracer = h.provider.get_tracer("test.framework.instrumentation")
    agent_attributes = {"openinference.span.kind": "AGENT"}
    with pytest.raises(Tripped) as caught, tracer.start_as_current_span("a.run", attributes=agent_attributes):
        for _ in range(6):
            with tracer.start_as_current_span("fetch", attributes={"openinference.span.kind": "TOOL",
                                                                   "tool.name": "fetch", "input.value": "{}",
                                                                   "output.value": "same page"}):
                pass
    assert isinstance(caught.value, FrameworkCancelled)
    with pytest.raises(TypeError):
        spanbreaker.register_trip_exception("x", ValueError)  # type: ignore[arg-type]


def test_tripped_is_a_base_exception_that_pickles() -> None:
    exc = Tripped("tool_repeat", "why", "ab" * 16, {"calls": 4})
    assert not isinstance(exc, Exception)
    copy = pickle.loads(pickle.dumps(exc))
    assert (copy.detector, copy.reason, copy.trace_id, copy.evidence) == ("tool_repeat", "why", "ab" * 16,
                                                                         {"calls": 4})
