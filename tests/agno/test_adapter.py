"""The Agno adapter's plumbing: what it instruments, the work-arounds it installs, and that it removes them.

Runs that need the global tracer provider (Agno's ``setup_tracing``) run in a subprocess.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agno.agent import Agent
from agno.agent import _run as agent_run
from agno.models.base import Model
from agno.models.response import ModelResponse
from agno.run.base import RunStatus
from agno.team import _run as team_run
from opentelemetry import trace
from opentelemetry.sdk.trace import Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from wrapt import FunctionWrapper

import spanbreaker
from spanbreaker.adapters._agno_patches import ContextExecutor
from spanbreaker.adapters.agno import ADAPTER, MIN_SPAN_ATTRIBUTES, trip_record

from .conftest import AgnoEnv, Launched, run
from .scripted import ScriptedModel, calls, scripted, tool_call

pytestmark = pytest.mark.timeout(90)


def test_custom_model_defined_after_instrumenting_is_traced(env: AgnoEnv) -> None:
    @dataclass
    class GatewayModel(Model):
        """A company gateway model, unknown to the instrumentor."""

        id: str = "gateway"
        name: str = "Gateway"
        provider: str = "Internal"

        def invoke(self, messages: list[Any], assistant_message: Any, response_format: Any = None,
                   tools: Any = None, tool_choice: Any = None, run_response: Any = None,
                   compress_tool_results: bool = False) -> ModelResponse:
            return ModelResponse(role="assistant", content="hello from the gateway")

        async def ainvoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
            raise NotImplementedError

        def invoke_stream(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

        def ainvoke_stream(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

        def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
            return response  # type: ignore[no-any-return]

        def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
            return response  # type: ignore[no-any-return]

    output = Agent(name="Gate", model=GatewayModel()).run("hi")
    assert output.content == "hello from the gateway"
    llm = [s for s in env.spans() if (s.attributes or {}).get("openinference.span.kind") == "LLM"]
    assert [s.name for s in llm] == ["Gateway.invoke"], "exactly one LLM span per call"
    assert (llm[0].attributes or {}).get("llm.model_name") == "gateway"


def test_one_llm_span_per_scripted_call(env: AgnoEnv) -> None:
    model = scripted([{"content": "x"}])
    for mode in ("sync", "async", "stream", "astream"):
        env.exporter.clear()
        run(Agent(name="One", model=scripted([{"content": "x"}])), mode)
        assert sum(1 for s in env.spans() if (s.attributes or {}).get("openinference.span.kind") == "LLM") == 1
    assert calls(model) == 0


def test_instrumentor_tracer_keeps_agent_span_attributes(env: AgnoEnv) -> None:
    """B4: the application's provider keeps the SDK default of 128; the instrumentor's tracer gets 1024."""
    assert env.provider.get_tracer("someone.else")._span_limits.max_span_attributes == 128  # type: ignore[attr-defined]
    tracer = ADAPTER._instrumentor._tracer.__wrapped__
    assert tracer._span_limits.max_span_attributes == MIN_SPAN_ATTRIBUTES


class KindAtStart(SpanProcessor):
    def __init__(self) -> None:
        self.kinds: list[Any] = []

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        self.kinds.append((span.attributes or {}).get("openinference.span.kind"))


def test_long_runs_keep_span_kind_at_start(env: AgnoEnv) -> None:
    seen = KindAtStart()
    env.provider.add_span_processor(seen)

    def note(text: str) -> str:
        """Take a note."""
        return f"noted {text}"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("note", text=f"fact {i}")]} if i < 30
                     else {"content": "done"})
    assert run(Agent(name="Long", model=model, tools=[note]), "sync").status is RunStatus.completed
    assert len(seen.kinds) == 62 and None not in seen.kinds


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_streamed_run_that_failed_is_an_error_span(env: AgnoEnv, mode: str) -> None:
    """B6: the instrumentor marks a streamed run OK even when it failed (no RunOutput, a RunErrorEvent)."""
    agent = Agent(name="Broken", model=scripted([{"raise": ValueError("provider exploded")}]))
    events = list(agent.run("go", stream=True)) if mode == "stream" else _collect_async(agent)
    assert type(events[-1]).__name__ == "RunErrorEvent"
    root = next(s for s in env.spans() if s.name.startswith("Broken."))
    assert root.status.status_code.name == "ERROR"


def _collect_async(agent: Agent) -> list[Any]:
    async def consume() -> list[Any]:
        return [e async for e in agent.arun("go", stream=True)]

    return asyncio.run(consume())


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_generator_tool_failing_midway_is_an_error(env: AgnoEnv, mode: str) -> None:
    """B2: the instrumentor reported a generator tool that raised as a success with its partial output."""
    def chunks(n: int) -> Iterator[str]:
        """Stream chunks."""
        yield "part one "
        raise ValueError("stream broke")

    model = scripted([{"tool_calls": [tool_call("chunks", n=2)]}, {"content": "handled"}])
    output = run(Agent(name="Gen", model=model, tools=[chunks]), mode)
    assert output.status is RunStatus.completed
    assert output.tools and output.tools[0].tool_call_error
    tool = next(s for s in env.spans() if s.name == "chunks")
    assert tool.status.status_code.name == "ERROR"
    assert any(e.name == "exception" for e in tool.events)
    env.assert_nothing_lost()


def test_background_pool_carries_the_callers_context(env: AgnoEnv) -> None:
    """B7: memory and learning calls run in Agno's pool; they must stay in the run's trace."""
    agent = Agent(name="Bg", model=scripted([{"content": "x"}]))
    pool = agent.background_executor
    assert isinstance(pool, ContextExecutor)
    tracer = env.provider.get_tracer("test")
    with tracer.start_as_current_span("run") as span:
        seen = pool.submit(trace.get_current_span).result(timeout=5)
    assert seen is span


def test_background_memory_call_stays_in_the_runs_trace(env: AgnoEnv, tmp_path: Path) -> None:
    from agno.db.sqlite import SqliteDb
    from agno.memory import MemoryManager

    memory_model = scripted(lambda m, i: {"content": "nothing worth remembering"})
    agent = Agent(name="Mem", model=scripted([{"content": "noted"}]), db=SqliteDb(db_file=str(tmp_path / "m.db")),
                  memory_manager=MemoryManager(model=memory_model), update_memory_on_run=True, user_id="u1")
    assert agent.run("I like green tea").status is RunStatus.completed
    assert calls(memory_model) == 1
    spans = env.spans()
    roots = [s for s in spans if s.parent is None]
    assert [s.name for s in roots] == ["Mem.run"], "the memory call must not start a trace of its own"
    assert len({s.context.trace_id for s in spans if s.context is not None}) == 1


def test_uninstrument_removes_every_wrapper(env: AgnoEnv) -> None:
    Agent(name="Warm", model=scripted([{"content": "x"}])).run("warm")  # lazily wraps ScriptedModel
    assert isinstance(ScriptedModel.__dict__["invoke"], FunctionWrapper)
    ADAPTER.uninstrument()
    assert not isinstance(agent_run.__dict__["_run"], FunctionWrapper)
    assert not isinstance(team_run.__dict__["_arun"], FunctionWrapper)
    assert not isinstance(ScriptedModel.__dict__["invoke"], FunctionWrapper)
    assert not isinstance(Model.__dict__["_invoke_with_retry"], FunctionWrapper)
    assert not isinstance(Agent(name="Plain", model=scripted([{"content": "x"}])).background_executor,
                          ContextExecutor)
    env.exporter.clear()
    Agent(name="Untraced", model=scripted([{"content": "x"}])).run("hi")
    assert env.spans() == ()


@pytest.fixture
def global_style_instrument() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """``spanbreaker.instrument(tracer_provider=...)``: the public entry point."""
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    spanbreaker.uninstrument()
    provider.shutdown()


def test_spanbreaker_instrument_covers_agno(global_style_instrument: tuple[TracerProvider, Any]) -> None:
    provider, exporter = global_style_instrument
    spanbreaker.instrumentation.uninstrument()
    processor = spanbreaker.instrument(tracer_provider=provider, config=spanbreaker.BreakerConfig(tool_repeat_max=2),
                                       frameworks=["agno"])
    assert processor is not None

    def ping(host: str) -> str:
        """Ping a host."""
        return "timeout"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("ping", host="db-1")]})
    output = Agent(name="Pinger", model=model, tools=[ping]).run("is db-1 up?")
    assert output.status is RunStatus.cancelled
    record = trip_record(output, processor)
    assert record is not None and record.detector == "tool_repeat" and calls(model) == 3
    assert any((s.attributes or {}).get("spanbreaker.blocked") for s in exporter.get_finished_spans())


def test_setup_tracing_first_then_spanbreaker(launched: dict[str, Launched]) -> None:
    done = launched["setup_tracing_first"].result()
    assert done.returncode == 0, done.stderr[-3000:]
    line = done.stdout.strip().splitlines()[-1]
    assert "status CANCELLED" in line and "detector tool_repeat" in line, line
    assert int(line.rsplit(" ", 1)[-1]) > 0, "Agno's own exporter still gets the spans"
