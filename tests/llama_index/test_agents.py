"""LlamaIndex ``FunctionAgent`` under the breaker, end to end: awaited or with its events streamed, its model
streaming or not, with the real OpenInference instrumentor and a scripted model.

A looping agent is stopped long before ``max_iterations``, the stop gets past LlamaIndex's dispatcher (which
swallows every exception a span handler raises) and reaches the caller as ``spanbreaker.Tripped``, and every
span is exported with the trip marks; a healthy run and a wide one (six different queries, one answer) stay
quiet.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from workflows.errors import WorkflowRuntimeError

import spanbreaker

from .conftest import LlamaIndexEnv
from .scripted import (
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

LOOP_DETECTOR = "tool_repeat"
LOOP_TOOL_CALLS = 4
"""Tool executions a looping agent makes: the 5th identical call is vetoed before it runs (LlamaIndex alone:
``LOOP_LIMIT``)."""


def _of_trace(env: LlamaIndexEnv, trace_id: str) -> list[ReadableSpan]:
    return [s for s in env.spans() if s.context is not None and f"{s.context.trace_id:032x}" == trace_id]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("mode", MODES)
def test_loop_is_stopped_and_the_stop_reaches_the_caller(env: LlamaIndexEnv, mode: str, model: str) -> None:
    agent, calls = build("loop", model)
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(agent, mode)
    trip = caught.value
    assert trip.detector == LOOP_DETECTOR
    assert calls.tools == LOOP_TOOL_CALLS and calls.model == LOOP_TOOL_CALLS + 1
    assert calls.tools < LOOP_LIMIT
    env.assert_nothing_lost()
    spans = _of_trace(env, trip.trace_id)
    assert len(spans) == len(env.spans()), "one run, one trace: the vetoed span left no stray parent behind"
    blocked = [s for s in spans if (s.attributes or {}).get("spanbreaker.blocked") is True]
    assert len(blocked) == 1 and blocked[0].attributes["spanbreaker.detector"] == LOOP_DETECTOR
    assert blocked[0].name == "FunctionTool.acall" and blocked[0].attributes["openinference.span.kind"] == "TOOL"
    roots = [s for s in spans if s.parent is None]
    assert len(roots) == 1 and roots[0].name == "FunctionAgent.run"
    assert roots[0].attributes["spanbreaker.tripped"] is True
    record = env.processor.trip_record(trip.trace_id)
    assert record is not None and record.detector == LOOP_DETECTOR
    assert any(f"{s.context.span_id:016x}" == record.span_id for s in spans if s.context is not None)
    assert any(event.name == "spanbreaker.trip" for s in spans for event in s.events)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("case", "queries"), [("healthy", HEALTHY_QUERIES), ("wide", WIDE_QUERIES)])
def test_healthy_and_wide_runs_stay_quiet(env: LlamaIndexEnv, mode: str, model: str, case: str,
                                          queries: tuple[str, ...]) -> None:
    agent, calls = build(case, model)
    output = run(agent, mode)
    assert str(output) == ANSWERS[case]
    assert calls.queries == list(queries)
    assert env.processor.stats.trips == 0 and env.processor.stats.warnings == 0
    assert env.marked("spanbreaker.tripped") == []
    env.assert_nothing_lost()
    assert len(env.of_kind("TOOL")) == len(queries)


def test_tool_results_are_read_without_their_tooloutput_envelope(env: LlamaIndexEnv) -> None:
    """The instrumentor records a tool's ``ToolOutput`` with the call's arguments inside (``raw_input``); the
    breaker compares its ``raw_output``: six queries returning one text are seen returning the same result."""
    from spanbreaker.conventions import llama_index as li

    agent, _ = build("wide")
    run(agent)
    outputs = [s.attributes["output.value"] for s in env.of_kind("TOOL")]
    assert len(outputs) == len(WIDE_QUERIES) and len(set(outputs)) == len(WIDE_QUERIES)
    assert all(li.is_tool_output(o) and '"raw_input"' in o for o in outputs)
    assert {li.tool_result(o, 65_536) for o in outputs} == {"no results yet"}
    assert {li.tool_result(o, 16) for o in outputs} == {'"no results yet"'}


def test_a_trip_found_at_a_span_end_stops_the_next_model_call(make_env: Callable[..., LlamaIndexEnv]) -> None:
    """A budget trip (model calls) opens the breaker when a model span starts; the veto gets past the dispatcher
    just as a tool's does, and the model is not called again."""
    env = make_env(max_model_calls=3)
    agent, calls = build("healthy")
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(agent)
    assert caught.value.detector == "call_budget"
    assert calls.model == 3
    env.assert_nothing_lost()
    blocked = env.marked("spanbreaker.blocked")
    assert len(blocked) == 1 and blocked[0].attributes["openinference.span.kind"] == "LLM"


def test_observe_mode_marks_and_lets_llamaindex_guard_end_the_loop(make_env: Callable[..., LlamaIndexEnv]) -> None:
    env = make_env(mode="observe")
    agent, calls = build("loop")
    with pytest.raises(WorkflowRuntimeError, match="Max iterations"):
        run(agent)
    assert calls.tools == LOOP_LIMIT
    assert env.processor.stats.trips == 1 and env.processor.stats.blocked == 0
    assert env.marked("spanbreaker.tripped")
    env.assert_nothing_lost()


def test_steer_reaches_the_model_as_the_tool_error_then_the_repeat_stops(
        make_env: Callable[..., LlamaIndexEnv]) -> None:
    """Under ``response="steer"`` the first finding is a ``spanbreaker.Steered`` raised where the tool span starts:
    it gets past the dispatcher, ``FunctionAgent`` turns it into the tool's error output (the model reads it) and
    the call does not run; the loop going on regardless is stopped by the hard trip."""
    env = make_env(response="steer")
    agent, calls = build("loop")
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(agent)
    assert caught.value.detector == LOOP_DETECTOR
    assert calls.tools == LOOP_TOOL_CALLS, "the steered call and the stopped one never ran"
    assert env.processor.stats.steered == 1
    steered = env.marked("spanbreaker.steered")
    assert len(steered) == 1 and steered[0].name == "FunctionTool.acall"
    call_tool = [s for s in env.spans() if s.name == "BaseWorkflowAgent.call_tool"]
    assert any("spanbreaker:" in str(s.attributes.get("output.value")) for s in call_tool), \
        "the steer message became the tool's output, for the model"
    env.assert_nothing_lost()


@pytest.mark.parametrize("mode", MODES)
def test_react_agent_loop_is_stopped(env: LlamaIndexEnv, mode: str) -> None:
    """A ``ReActAgent`` (tools called from parsed text, not tool calls) loops the same way and stops the same way."""
    agent, calls = build_react()
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(agent, mode)
    assert caught.value.detector == LOOP_DETECTOR
    assert calls.tools == LOOP_TOOL_CALLS and calls.model == LOOP_TOOL_CALLS + 1
    env.assert_nothing_lost()
    blocked = env.marked("spanbreaker.blocked")
    assert len(blocked) == 1 and blocked[0].name == "FunctionTool.acall"
    roots = [s for s in env.spans() if s.parent is None]
    assert len(roots) == 1 and roots[0].name == "ReActAgent.run" and roots[0].attributes["spanbreaker.tripped"]


@pytest.mark.parametrize("mode", MODES)
def test_multi_agent_workflow_loop_after_a_handoff_is_stopped(env: LlamaIndexEnv, mode: str) -> None:
    """An ``AgentWorkflow``: the front agent hands off, the researcher loops; the handoff is a tool call of its
    own, the loop is stopped in the researcher, and the whole workflow run ends with the trip."""
    workflow, calls = build_handoff()
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(workflow, mode)
    assert caught.value.detector == LOOP_DETECTOR
    assert calls.tools == LOOP_TOOL_CALLS and calls.model == LOOP_TOOL_CALLS + 2
    env.assert_nothing_lost()
    tools = env.of_kind("TOOL")
    assert [s.attributes["tool.name"] for s in tools].count("handoff") == 1
    roots = [s for s in env.spans() if s.parent is None]
    assert len(roots) == 1 and roots[0].name == "AgentWorkflow.run" and roots[0].attributes["spanbreaker.tripped"]
