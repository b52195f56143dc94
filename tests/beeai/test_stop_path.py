"""How a trip reaches a BeeAI caller: Tripped itself, through BeeAI's wrappers and retries, with nothing leaked.

Measured facts these tests pin (beeai-framework 0.1.85, openinference-instrumentation-beeai):
* the stock instrumentor creates spans only after the root run finished, so the adapter emits them live;
* BeeAI's emitter wraps a BaseException in a BaseExceptionGroup (asyncio.TaskGroup); the adapter unwraps it;
* ``max_retries_per_step`` / ``total_max_retries`` (AgentError, ToolError counters) never see the trip.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace as trace_api

import spanbreaker
from spanbreaker.adapters import _beeai_stop
from spanbreaker.adapters._beeai_live import LiveBeeAIInstrumentor

from . import scenarios
from .checks import BLOCKED, TRIPPED, assert_quiet, assert_trip_marked
from .conftest import Traced

REPO = Path(__file__).resolve().parents[2]


def _fixation(kind: str, *, retries: int | None = None) -> tuple[scenarios.Outcome, object]:
    """Run the fixation loop; return the outcome and the OTel context seen after it."""
    async def go() -> tuple[scenarios.Outcome, object]:
        before = otel_context.get_current()
        options = {} if retries is None else {"max_retries_per_step": retries, "total_max_retries": retries}
        model = scenarios.model_for(
            kind, lambda i: scenarios.Call("web_search", {"query": scenarios.PARAPHRASES[i % 7]}))
        agent = scenarios.make_agent(kind, model, [scenarios.web_search])
        trip, result = await scenarios.run_agent(agent, "find span processor examples",
                                                 max_iterations=scenarios.MAX_ITERATIONS, **options)
        assert otel_context.get_current() == before, "the run leaked an OTel context"
        return scenarios.Outcome(trip, model.calls, scenarios.MAX_ITERATIONS, result), otel_context.get_current()

    return asyncio.run(asyncio.wait_for(go(), 30.0))


@pytest.mark.parametrize("kind", scenarios.AGENT_KINDS)
def test_caller_gets_tripped_itself_and_every_span_is_exported_once(
        traced: Callable[..., Traced], kind: str) -> None:
    t = traced()
    outcome, _ = _fixation(kind, retries=50)  # generous step and total retries: none of them sees the trip
    assert type(outcome.trip) is spanbreaker.Tripped  # not a BaseExceptionGroup, not a FrameworkError
    # Detected when the 4th search ended; raised when the model call after it started (a latched block).
    assert outcome.trip is not None and outcome.trip.blocked
    assert_trip_marked(t, outcome.trip)
    assert not trace_api.get_current_span().get_span_context().is_valid
    assert LiveBeeAIInstrumentor._instance._runs == {}, "a run was left open"
    # The vetoed call is the model call after the trip: it never ran.
    llm = [s for s in t.spans() if (s.attributes or {}).get("openinference.span.kind") == "LLM"]
    assert len(llm) == outcome.model_calls + 1
    assert (llm[-1].attributes or {}).get(BLOCKED) is True
    assert outcome.model_calls == 5 and t.breaker.stats.blocked == 1
    record = t.breaker.trip_record(outcome.trip.trace_id)
    assert record is not None and record.model_calls_after == 1 and record.tool_calls_after == 0


def test_concurrent_runs_are_separate_traces_and_only_the_looping_one_stops(
        traced: Callable[..., Traced]) -> None:
    t = traced()

    async def both() -> tuple[scenarios.Outcome, scenarios.Outcome]:
        looping, healthy = await asyncio.gather(scenarios.fixation("requirement", healthy=False),
                                                scenarios.echo_loop("requirement", healthy=True))
        return looping, healthy

    looping, healthy = asyncio.run(asyncio.wait_for(both(), 60.0))
    assert looping.trip is not None and looping.trip.detector == "input_fixation"
    assert healthy.trip is None and healthy.result is not None
    assert_trip_marked(t, looping.trip)
    agents = [s for s in t.spans() if (s.attributes or {}).get("openinference.span.kind") == "AGENT"]
    assert len({s.context.trace_id for s in agents if s.context is not None}) == 2


def test_a_caller_streaming_the_run_events_gets_tripped(traced: Callable[..., Traced]) -> None:
    """``async for data, event in agent.run(...)``: the events stop and the trip surfaces, no hang."""
    t = traced()

    async def stream() -> tuple[int, BaseException | None]:
        model = scenarios.model_for(
            "requirement", lambda i: scenarios.Call("web_search", {"query": scenarios.PARAPHRASES[i % 7]}))
        agent = scenarios.make_agent("requirement", model, [scenarios.web_search])
        events = 0
        try:
            async for _ in agent.run("find span processor examples", max_iterations=scenarios.MAX_ITERATIONS):
                events += 1
        except spanbreaker.Tripped as trip:
            return events, trip
        return events, None

    events, trip = asyncio.run(asyncio.wait_for(stream(), 30.0))
    assert isinstance(trip, spanbreaker.Tripped) and trip.detector == "input_fixation"
    assert events > 0
    assert_trip_marked(t, trip)


def test_kill_switch_blocks_the_next_agent_run_at_its_start(traced: Callable[..., Traced]) -> None:
    """``force_open`` on a session's trace: the next agent run is vetoed at its own start, no model call."""
    t = traced()
    tracer = t.provider.get_tracer("tests.beeai")

    async def session() -> tuple[BaseException | None, int]:
        model = scenarios.model_for("requirement", [scenarios.Answer("hello")])
        agent = scenarios.make_agent("requirement", model, [])
        with tracer.start_as_current_span("chat session") as span:
            t.breaker.force_open(span.get_span_context().trace_id, reason="operator stop")
            trip, _ = await scenarios.run_agent(agent, "hi")
        return trip, model.calls

    trip, calls = asyncio.run(asyncio.wait_for(session(), 30.0))
    assert isinstance(trip, spanbreaker.Tripped) and trip.detector == "forced" and trip.blocked
    assert calls == 0
    blocked = [s for s in t.spans() if (s.attributes or {}).get(BLOCKED)]
    assert [(s.attributes or {}).get("openinference.span.kind") for s in blocked] == ["AGENT"]
    assert LiveBeeAIInstrumentor._instance._runs == {}


def test_next_run_starts_a_clean_trace(traced: Callable[..., Traced]) -> None:
    t = traced()
    tripped, _ = _fixation("requirement")
    assert tripped.trip is not None
    healthy = asyncio.run(scenarios.fixation("requirement", healthy=True))
    assert healthy.trip is None and healthy.result is not None
    traces = {s.context.trace_id for s in t.spans() if s.context is not None}
    assert len(traces) == 2
    later = [s for s in t.spans() if s.context is not None and f"{s.context.trace_id:032x}" != tripped.trip.trace_id]
    assert later and not [s for s in later if (s.attributes or {}).get(TRIPPED)]


def test_observe_mode_marks_the_trip_and_lets_the_run_finish(traced: Callable[..., Traced]) -> None:
    t = traced(mode="observe")
    outcome = asyncio.run(scenarios.fixation("requirement", healthy=False, limit=8))
    assert outcome.trip is None and outcome.result is not None
    assert t.breaker.stats.trips == 1 and t.breaker.stats.blocked == 0
    assert any((s.attributes or {}).get(TRIPPED) for s in t.spans())


def test_stock_instrumentor_is_replaced_so_spans_are_live_and_exported_once(traced: Callable[..., Traced]) -> None:
    from openinference.instrumentation.beeai import BeeAIInstrumentor

    from spanbreaker.adapters.beeai import ADAPTER

    spanbreaker.instrumentation.uninstrument()
    stock = BeeAIInstrumentor()
    stock.instrument(tracer_provider=trace_api.NoOpTracerProvider())  # instrumented before spanbreaker
    try:
        t = traced()
        stock.instrument(tracer_provider=t.provider)  # and again after it, as opentelemetry-instrument does: a no-op
        outcome = asyncio.run(scenarios.fixation("tool_calling", healthy=True))
        assert outcome.trip is None
        assert_quiet(t)
        assert len(t.kind("AGENT")) == 1
    finally:
        if not ADAPTER._claimed and stock.is_instrumented_by_opentelemetry:
            stock.uninstrument()


def test_launcher_attaches_the_breaker_and_stops_a_bee_agent(tmp_path: Path) -> None:
    """``opentelemetry-instrument`` loads the stock BeeAI instrumentor after spanbreaker's hook; still one live
    span per run, and the loop is stopped."""
    app = tmp_path / "bee_app.py"
    app.write_text(LAUNCHED_APP)
    launcher = Path(sys.executable).with_name("opentelemetry-instrument")
    env = {**os.environ, "PYTHONPATH": str(REPO), "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none",
           "OTEL_LOGS_EXPORTER": "none", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": "smolagents,agno"}  # this test is about BeeAI; saves ~8 s
    result = subprocess.run([str(launcher), sys.executable, str(app)], capture_output=True, text=True, timeout=90,
                            cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["input_fixation", "agents=1", "unique=yes", "llm_blocked=1"]


LAUNCHED_APP = """
import asyncio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tests.beeai import scenarios

provider = TracerProvider()
exporter = InMemorySpanExporter()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)  # spanbreaker attaches here (deferred by its launcher hook)
outcome = asyncio.run(scenarios.fixation("requirement", healthy=False))
spans = exporter.get_finished_spans()
kinds = [s.attributes.get("openinference.span.kind") for s in spans]
ids = [s.context.span_id for s in spans]
blocked = [s for s in spans if s.attributes.get("spanbreaker.blocked") and kinds[spans.index(s)] == "LLM"]
print(outcome.trip.detector if outcome.trip else "no-trip", f"agents={kinds.count('AGENT')}",
      "unique=" + ("yes" if len(ids) == len(set(ids)) else "no"), f"llm_blocked={len(blocked)}")
"""


def test_only_groups_of_trips_are_unwrapped() -> None:
    trip = spanbreaker.Tripped("tool_repeat", "loop", "0" * 32)
    group = BaseExceptionGroup("g", [BaseExceptionGroup("inner", [trip]), asyncio.CancelledError()])
    assert _beeai_stop.only_trip(group) is trip
    assert _beeai_stop.only_trip(BaseExceptionGroup("g", [trip, ValueError("x")])) is None


def test_example_runs_offline_and_tells_the_story() -> None:
    result = subprocess.run([sys.executable, str(REPO / "examples" / "beeai_fixation_spiral.py")],
                            capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "input_fixation" in result.stdout
    assert "tripped" in result.stdout.lower()
