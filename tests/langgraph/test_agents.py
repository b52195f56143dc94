"""LangGraph agents under the breaker, end to end: the prebuilt ReAct agent and a hand-built StateGraph, in every
run mode (``invoke``, ``ainvoke``, ``stream``, ``astream``), with the real instrumentor and a scripted model.

A looping agent is stopped long before LangGraph's recursion limit, the stop reaches the caller as
``spanbreaker.Tripped``, and every span is exported with the trip marks; a healthy run and a wide one (six
different queries, one answer) stay quiet.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest
from langgraph.errors import GraphRecursionError
from opentelemetry.sdk.trace import ReadableSpan

import spanbreaker

from .conftest import MODES, LangGraphEnv, run
from .scripted import AGENTS, HEALTHY_QUERIES, RECURSION_LIMIT, WIDE_QUERIES, build

LOOP_DETECTOR = "tool_repeat"
LOOP_TOOL_CALLS = 4
"""Tool executions a looping agent makes: the 5th identical call is vetoed before it runs (LangGraph alone:
(RECURSION_LIMIT - 1) // 2)."""


def _of_trace(env: LangGraphEnv, trace_id: str) -> list[ReadableSpan]:
    return [s for s in env.spans() if s.context is not None and f"{s.context.trace_id:032x}" == trace_id]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_loop_is_stopped_and_the_stop_reaches_the_caller(env: LangGraphEnv, agent: str, mode: str) -> None:
    graph, calls = build(agent, "loop")
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(graph, mode)
    trip = caught.value
    assert trip.detector == LOOP_DETECTOR
    assert calls.tools == LOOP_TOOL_CALLS
    assert calls.tools < (RECURSION_LIMIT - 1) // 2
    env.assert_nothing_lost()
    spans = _of_trace(env, trip.trace_id)
    blocked = [s for s in spans if (s.attributes or {}).get("spanbreaker.blocked") is True]
    assert len(blocked) == 1 and blocked[0].attributes["spanbreaker.detector"] == LOOP_DETECTOR
    assert blocked[0].name == "search" and blocked[0].attributes["openinference.span.kind"] == "TOOL"
    roots = [s for s in spans if s.parent is None]
    assert len(roots) == 1 and roots[0].name == "LangGraph"
    assert roots[0].attributes["spanbreaker.tripped"] is True
    record = env.processor.trip_record(trip.trace_id)
    assert record is not None and record.detector == LOOP_DETECTOR
    assert any(f"{s.context.span_id:016x}" == record.span_id for s in spans if s.context is not None)
    assert any(event.name == "spanbreaker.trip" for s in spans for event in s.events)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("agent", sorted(AGENTS))
@pytest.mark.parametrize(("case", "queries", "answer"), [
    ("healthy", HEALTHY_QUERIES, "Sunny everywhere."),
    ("wide", WIDE_QUERIES, "No hotel data anywhere."),
])
def test_healthy_and_wide_runs_stay_quiet(env: LangGraphEnv, agent: str, mode: str, case: str,
                                          queries: tuple[str, ...], answer: str) -> None:
    graph, calls = build(agent, case)
    final = run(graph, mode)
    messages = final["messages"] if "messages" in final else next(iter(final.values()))["messages"]
    assert messages[-1].content == answer
    assert calls.queries == list(queries)
    assert env.processor.stats.trips == 0 and env.processor.stats.warnings == 0
    assert env.marked("spanbreaker.tripped") == []
    env.assert_nothing_lost()
    tools = [s for s in env.spans() if (s.attributes or {}).get("openinference.span.kind") == "TOOL"]
    assert len(tools) == len(queries)


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_observe_mode_marks_and_lets_langgraph_guard_end_the_loop(make_env: Callable[..., LangGraphEnv],
                                                                 agent: str) -> None:
    env = make_env(mode="observe")
    graph, calls = build(agent, "loop")
    with contextlib.suppress(GraphRecursionError):  # the hand-built graph raises it; the ReAct agent says sorry
        run(graph, "sync")
    assert calls.tools >= (RECURSION_LIMIT - 1) // 2
    assert env.processor.stats.trips == 1 and env.processor.stats.blocked == 0
    assert env.marked("spanbreaker.tripped")
    env.assert_nothing_lost()


@pytest.mark.parametrize("mode", ["sync", "astream"])
def test_retry_policy_and_tool_error_handling_do_not_swallow_the_stop(env: LangGraphEnv, mode: str) -> None:
    """A node retried on every ``Exception`` and a ToolNode that turns every tool error into a message: the trip
    passes both, is not retried, and the loop stops where it stops without them."""
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from langgraph.types import RetryPolicy

    from .scripted import RESULTS, SCRIPTS, Calls, ScriptedChatModel, search_tool

    calls = Calls()
    model = ScriptedChatModel(script=SCRIPTS["loop"], calls=calls)
    retry = RetryPolicy(max_attempts=5, initial_interval=0.0, jitter=False, retry_on=Exception)
    graph = StateGraph(MessagesState)
    graph.add_node("llm", lambda state: {"messages": [model.invoke(state["messages"])]}, retry_policy=retry)
    graph.add_node("tools", ToolNode([search_tool(calls, RESULTS["loop"])], handle_tool_errors=True),
                   retry_policy=retry)
    graph.add_edge(START, "llm")
    graph.add_conditional_edges("llm", tools_condition)
    graph.add_edge("tools", "llm")
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(graph.compile(), mode)
    assert caught.value.detector == LOOP_DETECTOR
    assert calls.tools == LOOP_TOOL_CALLS and calls.model == LOOP_TOOL_CALLS + 1
    assert env.processor.stats.blocked == 1, "the vetoed node was retried (a retry meets the latched breaker)"
    env.assert_nothing_lost()


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_steer_response_stops_hard_where_langchain_would_swallow_the_steer(
        make_env: Callable[..., LangGraphEnv], agent: str) -> None:
    """LangChain's callback manager logs and swallows an ordinary exception raised where a tool span starts, so a
    ``spanbreaker.Steered`` would let the call run (and the span end twice). Under ``response="steer"`` the
    LangChain scope stops with the hard trip instead: the vetoed call never runs, nothing is lost."""
    env = make_env(response="steer")
    graph, calls = build(agent, "loop")
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(graph, "sync")
    assert caught.value.detector == LOOP_DETECTOR
    assert calls.tools == LOOP_TOOL_CALLS
    env.assert_nothing_lost()
    blocked = [s for s in env.spans() if (s.attributes or {}).get("spanbreaker.blocked") is True]
    assert len(blocked) == 1 and blocked[0].attributes["spanbreaker.tripped"] is True
