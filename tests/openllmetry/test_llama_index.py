"""LlamaIndex agents traced by OpenLLMetry's LlamaIndex instrumentor (Traceloop's
``opentelemetry-instrumentation-llamaindex``), with spanbreaker's adapter: a looping ``FunctionAgent`` (its model
streaming or not, awaited or its events streamed), ``ReActAgent`` and multi-agent ``AgentWorkflow`` are stopped at the
fifth identical call before it runs, content tracing on or off, the stop reaches the caller, the run stays one trace
and every span is exported once; healthy and wide runs stay quiet; budgets count the model calls and their tokens.

Everything is real LlamaIndex and the real instrumentor; the scripted LLM of the LlamaIndex suite is the only stub.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from llama_index.core.instrumentation import get_dispatcher
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor
from opentelemetry.instrumentation.llamaindex.dispatcher_wrapper import (
    OpenLLMetryEventHandler,
    OpenLLMetrySpanHandler,
)
from workflows.errors import WorkflowRuntimeError

import spanbreaker
from spanbreaker.adapters.openllmetry_llama_index import ADAPTER
from spanbreaker.replay import replay
from spanbreaker.signals import Kind

from ..genai_rig import Rig
from ..llama_index.scripted import (
    ANSWERS,
    HEALTHY_QUERIES,
    LOOP_LIMIT,
    MODELS,
    MODES,
    WIDE_QUERIES,
    build,
    build_handoff,
    build_react,
    run,
)
from .conftest import CONTENT, content_rigs

pytestmark = pytest.mark.timeout(60)
LOOP_TOOL_CALLS = 4
"""Tool executions a looping agent makes: the 5th identical call is vetoed before it runs."""


def _take_handlers_off() -> None:
    """The instrumentor's ``uninstrument`` leaves its handlers on LlamaIndex's dispatcher (0.62.4)."""
    dispatcher = get_dispatcher()
    dispatcher.span_handlers[:] = [h for h in dispatcher.span_handlers if not isinstance(h, OpenLLMetrySpanHandler)]
    dispatcher.event_handlers[:] = [h for h in dispatcher.event_handlers
                                    if not isinstance(h, OpenLLMetryEventHandler)]


@pytest.fixture
def make_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Rig]]:
    """``make(content="content on", **config)``: a rig with the adapter and the instrumentor on."""
    _take_handlers_off()
    with content_rigs(monkeypatch, ADAPTER, LlamaIndexInstrumentor) as make:
        yield make
    _take_handlers_off()


def one_trace(rig: Rig) -> None:
    """The run is one trace with one root, the workflow's run: no span above a streamed call ended early."""
    spans = rig.spans()
    assert len({s.context.trace_id for s in spans if s.context is not None}) == 1
    roots = [s for s in spans if s.parent is None]
    assert len(roots) == 1 and roots[0].name.endswith(".workflow"), [s.name for s in roots]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("content", list(CONTENT))
def test_a_loop_is_stopped_before_the_fifth_identical_call_runs(
        make_env: Callable[..., Rig], content: str, mode: str, model: str) -> None:
    rig = make_env(content)
    agent, calls = build("loop", model)
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(agent, mode)
    assert caught.value.detector == "tool_repeat" and caught.value.evidence["identical_calls"] == 5
    assert calls.tools == LOOP_TOOL_CALLS and calls.model == LOOP_TOOL_CALLS + 1
    rig.assert_nothing_lost()
    one_trace(rig)
    blocked = rig.blocked()
    assert [s.name for s in blocked] == ["FunctionTool.task"]
    assert blocked[0].attributes["gen_ai.operation.name"] == "execute_tool"  # type: ignore[index]
    assert next(s for s in rig.spans() if s.parent is None).attributes["spanbreaker.tripped"] is True  # type: ignore[index]
    assert len(rig.of_kind(Kind.LLM)) == LOOP_TOOL_CALLS + 1


def test_without_the_adapter_the_loop_runs_to_llamaindexs_limit(make_env: Callable[..., Rig]) -> None:
    """The stock instrumentor, measured: its spans start bare, so no call is read as it starts, and the agent runs
    its 29 searches to ``max_iterations``."""
    rig = make_env()
    ADAPTER.uninstrument()
    agent, calls = build("loop")
    with pytest.raises(WorkflowRuntimeError, match="Max iterations"):
        run(agent)
    assert calls.tools == LOOP_LIMIT and rig.processor.stats.trips == 0


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(("case", "queries"), [("healthy", HEALTHY_QUERIES), ("wide", WIDE_QUERIES)])
def test_healthy_and_wide_runs_stay_quiet(make_env: Callable[..., Rig], model: str, case: str,
                                          queries: tuple[str, ...]) -> None:
    rig = make_env("content off")
    agent, calls = build(case, model)
    assert str(run(agent)) == ANSWERS[case]
    assert calls.queries == list(queries)
    rig.assert_quiet()
    rig.assert_nothing_lost()
    one_trace(rig)
    assert len(rig.of_kind(Kind.TOOL)) == len(queries)


@pytest.mark.parametrize(("config", "detector", "vetoed"),
                         [({"max_model_calls": 3}, "call_budget", "chat"),
                          ({"max_tokens": 300}, "token_budget", "execute_tool")], ids=["model-calls", "tokens"])
def test_budgets_count_the_model_calls_and_their_tokens(make_env: Callable[..., Rig], config: dict[str, int],
                                                        detector: str, vetoed: str) -> None:
    """Three model calls allowed: the fourth is vetoed before it is sent. 300 tokens (120 a call, reported as each
    call ends): the third call's end reaches them, and the next call, the search it asked for, is vetoed."""
    rig = make_env(**config)
    agent, calls = build("healthy")
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(agent)
    assert caught.value.detector == detector and calls.model == 3
    rig.assert_nothing_lost()
    assert [s.attributes["gen_ai.operation.name"] for s in rig.blocked()] == [vetoed]  # type: ignore[index]


def test_a_steer_reaches_the_model_then_the_repeat_is_stopped(make_env: Callable[..., Rig]) -> None:
    """``response="steer"``: the steer raised where the fifth call's span starts gets past the dispatcher and becomes
    the tool's error output (the call does not run); the loop going on regardless is stopped by the hard trip."""
    rig = make_env(response="steer")
    agent, calls = build("loop")
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(agent)
    assert caught.value.detector == "tool_repeat"
    assert calls.tools == LOOP_TOOL_CALLS, "the steered call and the stopped one never ran"
    assert rig.processor.stats.steered == 1
    rig.assert_nothing_lost()


@pytest.mark.parametrize("build_agent", [build_react, build_handoff], ids=["react", "handoff"])
def test_react_and_multi_agent_loops_are_stopped(make_env: Callable[..., Rig], build_agent: Any) -> None:
    rig = make_env()
    agent, calls = build_agent()
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(agent)
    assert caught.value.detector == "tool_repeat" and calls.tools == LOOP_TOOL_CALLS
    rig.assert_nothing_lost()
    one_trace(rig)


def test_the_exported_spans_replay_to_the_live_trip(make_env: Callable[..., Rig], tmp_path: Path) -> None:
    """Observe mode, content on: the run goes on to LlamaIndex's limit, the breaker recording where it would have
    stopped it. Its spans, exported through the real OTLP encoder, replay to the same trip (the records read as the
    adapter showed the calls live)."""
    rig = make_env(mode="observe")
    agent, calls = build("loop")
    with pytest.raises(WorkflowRuntimeError, match="Max iterations"):
        run(agent)
    assert calls.tools == LOOP_LIMIT
    path = tmp_path / "run.json"
    path.write_text(json.dumps(MessageToDict(encode_spans(rig.spans()))))
    (result,) = replay([path])
    live = rig.processor.trip_record(result.trace_id)
    assert live is not None and result.tripped and result.detector == "tool_repeat"
    assert (result.reason, result.span_name, result.tool_calls_after) == (live.reason, live.span_name,
                                                                          live.tool_calls_after)
