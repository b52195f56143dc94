"""``context_growth`` on LangGraph, both ways: a ReAct agent whose tool pours a huge result into the conversation is
stopped before the inflated model call is sent; a pipeline that routes with a short prompt and then answers from a
long document with another prompt is healthy work, not a jump.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

import spanbreaker

from .conftest import LangGraphEnv, run
from .scripted import Calls, ScriptedChatModel, react_agent, search_tool

REPORT = "".join(f"Section {n}. The northern division's quarterly revenue grew by a modest amount. "
                 for n in range(3000))
"""About 250,000 characters (62,000 tokens by the breaker's estimate): past ``context_jump_tokens`` alone."""


def _search_once(turn: int, messages: Sequence[BaseMessage]) -> list[tuple[str, dict[str, Any]]] | str:
    return [("search", {"query": "quarterly revenue"})] if turn == 0 else "Revenue grew."


@pytest.mark.parametrize("mode", ["sync", "astream"])
def test_a_tool_result_that_floods_the_conversation_is_stopped_before_the_next_model_call(
        env: LangGraphEnv, mode: str) -> None:
    calls = Calls()
    graph = react_agent(ScriptedChatModel(script=_search_once, calls=calls), [search_tool(calls, REPORT)])
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(graph, mode, "How did revenue change?")
    assert caught.value.detector == "context_growth"
    assert (calls.model, calls.tools) == (1, 1)  # the inflated second call was never sent
    env.assert_nothing_lost()


class _Pipeline(TypedDict, total=False):
    question: str
    route: str
    answer: str


def _pipeline(model: ScriptedChatModel) -> Any:
    from langgraph.graph import END, START, StateGraph

    def route(state: _Pipeline) -> dict[str, Any]:
        reply = model.invoke([SystemMessage("Classify the question: finance, legal or other."),
                              HumanMessage(state["question"])])
        return {"route": reply.content}

    def answer(state: _Pipeline) -> dict[str, Any]:
        reply = model.invoke([SystemMessage("Answer the question from the report below.\n\n" + REPORT),
                              HumanMessage(state["question"])])
        return {"answer": reply.content}

    graph = StateGraph(_Pipeline)
    graph.add_node("route", route)
    graph.add_node("answer", answer)
    graph.add_edge(START, "route")
    graph.add_edge("route", "answer")
    graph.add_edge("answer", END)
    return graph.compile()


def test_a_short_routing_call_then_a_long_document_call_is_not_a_jump(env: LangGraphEnv) -> None:
    calls = Calls()
    model = ScriptedChatModel(script=lambda turn, messages: "finance" if turn == 0 else "Revenue grew.", calls=calls)
    state = _pipeline(model).invoke({"question": "How did revenue change?"})
    assert state["answer"] == "Revenue grew." and calls.model == 2
    assert env.marked("spanbreaker.tripped") == [] and env.marked("spanbreaker.warned") == []
    env.assert_nothing_lost()
