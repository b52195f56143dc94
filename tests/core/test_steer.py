"""``response="steer"`` in the engine and the SDK façade: a loop detector's first finding on a tool call steers
(the call fails with ``Steered``, the breaker stays closed), its next finding trips; budgets stop hard; observe
mode only marks. The frameworks' own tool-error paths are proven in tests/<framework>/test_steer.py."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

import spanbreaker
from spanbreaker import BreakerConfig, ConfigError, Steered
from spanbreaker.breaker import BreakerState
from spanbreaker.detectors import ALL_DETECTORS
from spanbreaker.engine import BreakerEngine
from spanbreaker.verdict import Action, Verdict

TRACE, AGENT = 0xABC, 1
OK = Status(StatusCode.OK)
AGENT_ATTRS = {"openinference.span.kind": "AGENT", "input.value": "find the bug"}
STEER = BreakerConfig(response="steer")


def tool(name: str, query: str) -> dict[str, Any]:
    return {"openinference.span.kind": "TOOL", "tool.name": name, "input.value": json.dumps({"q": query})}


class Agent:
    """Feeds one agent's tool calls to an engine; each call returns the verdicts it met (start, end)."""

    def __init__(self, engine: BreakerEngine) -> None:
        self.engine = engine
        self.next_id = 10
        assert engine.start(TRACE, AGENT, None, False, "CodeAgent.run", AGENT_ATTRS, "agent") is None

    def call(self, name: str, query: str, result: str = "nothing useful") -> list[Verdict]:
        span_id, self.next_id = self.next_id, self.next_id + 1
        met = []
        started = self.engine.start(TRACE, span_id, AGENT, False, name, tool(name, query), f"tool-{span_id}")
        if started is not None and started.action is not Action.WARN:
            met.append(started)
            if started.block is not None:
                return met  # failed or vetoed: the call never ran, the façade ends the span
        ended = self.engine.end(TRACE, span_id, {"output.value": result}, (), OK)
        if ended is not None and ended.action is not Action.WARN:
            met.append(ended)
        return met


def test_only_loop_detectors_declare_themselves_steerable() -> None:
    steerable = {cls.id for cls in ALL_DETECTORS if cls.steerable}
    assert steerable == {"tool_repeat", "tool_cycle", "tool_streak", "input_fixation", "low_exploration"}


def test_first_finding_steers_the_call_and_the_next_identical_call_trips() -> None:
    engine = BreakerEngine(STEER)
    agent = Agent(engine)
    for _ in range(4):
        assert agent.call("search", "same") == []
    (steer,) = agent.call("search", "same")
    assert steer.action is Action.STEER and steer.detector == "tool_repeat"
    assert steer.block == "tool-14" and steer.marks == ("tool-14",)  # the call itself, nothing above it
    assert engine.state(TRACE) is BreakerState.CLOSED and engine.trip_record(TRACE) is None
    assert engine.stats.steered == 1 and engine.stats.trips == 0
    assert engine.steer_record(TRACE) is steer.record and steer.record is not None
    assert steer.record.evidence["identical_calls"] == 5 and "same" not in str(steer.record.evidence)
    (trip,) = agent.call("search", "same")
    assert trip.action is Action.BLOCK and trip.new_trip and trip.detector == "tool_repeat"


def test_a_different_call_after_the_steer_proceeds() -> None:
    agent = Agent(BreakerEngine(STEER))
    for _ in range(4):
        agent.call("search", "same")
    assert [v.action for v in agent.call("search", "same")] == [Action.STEER]
    assert agent.call("read_file", "setup.py", "[metadata] name = demo") == []
    assert agent.call("search", "another question", "a fresh answer") == []


def test_an_end_hook_steer_fails_the_next_call_of_that_tool_and_then_trips() -> None:
    """tool_streak decides when a call ends: the call already ran, so the tool's next call is the one failed."""
    agent = Agent(BreakerEngine(STEER.replace(tool_streak_max=4)))
    for i in range(4):
        assert agent.call("search", f"query {i}", "") == []  # the 4th finds the streak: the steer waits
    (steer,) = agent.call("search", "query 4", "")
    assert steer.action is Action.STEER and steer.detector == "tool_streak" and steer.block == "tool-14"
    (trip,) = agent.call("search", "query 5", "")
    assert trip.action is Action.TRIP and trip.detector == "tool_streak"


def test_an_end_hook_steer_is_dropped_when_the_agent_turns_to_another_tool() -> None:
    agent = Agent(BreakerEngine(STEER.replace(tool_streak_max=4)))
    for i in range(4):
        agent.call("search", f"query {i}", "")
    assert agent.call("read_file", "README.md", "# demo") == []  # changed course by itself: no steer, no trip
    assert agent.call("search", "query 9", "a result at last") == []


def test_budgets_still_stop_hard() -> None:
    agent = Agent(BreakerEngine(STEER.replace(max_tool_calls=3)))
    verdicts = [v for i in range(5) for v in agent.call("search", f"q{i}", f"answer {i}")]
    assert verdicts and verdicts[0].action is Action.BLOCK and verdicts[0].detector == "call_budget"


def test_observe_mode_marks_the_steer_and_reports_the_stop_after_it() -> None:
    engine = BreakerEngine(STEER.replace(mode="observe"))
    agent = Agent(engine)
    met = [v for _ in range(8) for v in agent.call("search", "same")]
    assert [v.action for v in met][:2] == [Action.STEER, Action.TRIP]
    assert all(v.block is None for v in met)  # nothing fails in observe mode
    steer, trip = engine.steer_record(TRACE), engine.trip_record(TRACE)
    assert steer is not None and trip is not None and steer.span_id != trip.span_id


def _harness(**config: Any) -> tuple[spanbreaker.BreakerSpanProcessor, TracerProvider, InMemorySpanExporter]:
    provider = TracerProvider()
    processor = spanbreaker.BreakerSpanProcessor(BreakerConfig(**config))
    exporter = InMemorySpanExporter()
    provider.add_span_processor(processor)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return processor, provider, exporter


def _search(provider: TracerProvider) -> None:
    with provider.get_tracer("test").start_as_current_span("search", attributes=tool("search", "same")) as span:
        span.set_attribute("output.value", "nothing useful")


@pytest.mark.parametrize("mode", ["enforce", "observe"])
def test_the_facade_fails_the_call_with_steered_and_exports_the_span(mode: str) -> None:
    processor, provider, exporter = _harness(response="steer", mode=mode)
    raised: list[BaseException] = []
    with provider.get_tracer("test").start_as_current_span("Agent.run", attributes=AGENT_ATTRS):
        for _ in range(6):
            try:
                _search(provider)
            except BaseException as exc:
                raised.append(exc)
    steered = [s for s in exporter.get_finished_spans() if (s.attributes or {}).get("spanbreaker.steered")]
    assert len(steered) == 1 and steered[0].attributes is not None
    assert steered[0].attributes["spanbreaker.detector"] == "tool_repeat"
    if mode == "observe":
        assert raised == [] and "spanbreaker.blocked" not in steered[0].attributes
        return
    assert [type(e) for e in raised] == [Steered, spanbreaker.Tripped]
    steer = raised[0]
    assert isinstance(steer, Exception) and str(steer).startswith("spanbreaker: search called 5 times")
    assert "Repeating it again stops the run" in str(steer)
    assert steered[0].attributes["spanbreaker.blocked"] is True
    assert steered[0].status.status_code is StatusCode.ERROR
    assert [e.name for e in steered[0].events] == ["spanbreaker.steer"]
    assert processor.stats.steered == 1 and processor.stats.trips == 1


def test_steered_carries_the_finding_and_survives_pickling() -> None:
    steer = Steered("tool_repeat", "search called 5 times", "ab" * 16, {"identical_calls": 5})
    copy = pickle.loads(pickle.dumps(steer))
    assert (copy.detector, copy.reason, copy.trace_id, copy.evidence) == (
        "tool_repeat", "search called 5 times", "ab" * 16, {"identical_calls": 5})
    assert str(copy) == str(steer) and not isinstance(steer, spanbreaker.Tripped)


def test_response_is_configured_and_validated(tmp_path: Path) -> None:
    assert BreakerConfig().response == "stop"
    assert BreakerConfig.load(environ={"SPANBREAKER_RESPONSE": "steer"}).response == "steer"
    with pytest.raises(ConfigError, match="SPANBREAKER_RESPONSE='nudge': expected 'stop' or 'steer'"):
        BreakerConfig.load(environ={"SPANBREAKER_RESPONSE": "nudge"})
    with pytest.raises(ConfigError, match="response='halt'"):
        BreakerConfig(response="halt")  # type: ignore[arg-type]
    path = tmp_path / "breaker.toml"
    path.write_text('response = "steer"\n')
    assert BreakerConfig.from_toml(path).response == "steer"
    path.write_text("response = 3\n")
    with pytest.raises(ConfigError, match="response"):
        BreakerConfig.from_toml(path)
