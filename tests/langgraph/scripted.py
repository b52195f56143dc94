"""A scripted chat model (the only stand-in: everything else is real LangGraph) and the agents the tests drive.

The model answers from a script: ``script(turn, messages)`` returns the tool calls to make (a list of
``(tool, arguments)``) or the final text. Three scripts stand for the cases every detector is proven on:

* ``loop``: the same search, with the same arguments, returning the same result, turn after turn;
* ``healthy``: three different searches, then an answer;
* ``wide``: six different searches that all return the same text (normal research: nothing to stop).

Two agents run them: LangGraph's prebuilt ReAct agent (``create_react_agent``) and a hand-built ``StateGraph``
whose model node and ``ToolNode`` are wired by hand.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, tool

Script = Callable[[int, Sequence[BaseMessage]], "list[tuple[str, dict[str, Any]]] | str"]
USAGE = {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120}
RECURSION_LIMIT = 60
"""LangGraph's own guard (its default is 25): a loop left alone makes (limit - 1) / 2 tool calls."""


@dataclass
class Calls:
    """What actually ran: model turns and tool executions (a vetoed call never runs)."""

    model: int = 0
    tools: int = 0
    queries: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from a script; tool binding is accepted and ignored (the script decides)."""

    script: Any
    calls: Any
    ids: Any = None

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        with self.calls.lock:
            turn = self.calls.model
            self.calls.model += 1
        answer = self.script(turn, messages)
        if isinstance(answer, str):
            message = AIMessage(content=answer, usage_metadata=USAGE)
        else:
            message = AIMessage(content="", usage_metadata=USAGE, tool_calls=[
                {"name": name, "args": args, "id": f"call_{turn}_{n}", "type": "tool_call"}
                for n, (name, args) in enumerate(answer)])
        return ChatResult(generations=[ChatGeneration(message=message)])


def loop(turn: int, messages: Sequence[BaseMessage]) -> list[tuple[str, dict[str, Any]]] | str:
    return [("search", {"query": "weather in Paris"})]


HEALTHY_QUERIES = ("weather in Paris", "weather in Rome", "weather in Oslo")
WIDE_QUERIES = ("hotels in Paris", "hotels in Lyon", "hotels in Nice", "hotels in Lille", "hotels in Nantes",
                "hotels in Brest")


def _queries(queries: Sequence[str], answer: str) -> Script:
    def script(turn: int, messages: Sequence[BaseMessage]) -> list[tuple[str, dict[str, Any]]] | str:
        return [("search", {"query": queries[turn]})] if turn < len(queries) else answer
    return script


healthy = _queries(HEALTHY_QUERIES, "Sunny everywhere.")
wide = _queries(WIDE_QUERIES, "No hotel data anywhere.")
SCRIPTS: dict[str, Script] = {"loop": loop, "healthy": healthy, "wide": wide}
RESULTS = {"loop": "Paris weather: sunny, 20C", "healthy": "{query}: sunny, 20C", "wide": "no results yet"}
"""What the search tool returns in each case (``{query}`` is filled in)."""


def search_tool(calls: Calls, result: str) -> BaseTool:
    @tool
    def search(query: str) -> str:
        """Search the web."""
        with calls.lock:
            calls.tools += 1
            calls.queries.append(query)
        return result.format(query=query)

    return search


def react_agent(model: BaseChatModel, tools: list[BaseTool]) -> Any:
    """LangGraph's prebuilt ReAct agent (deprecated in favour of ``langchain.agents.create_agent``, still shipped)."""
    from langgraph.prebuilt import create_react_agent

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_react_agent(model, tools)


def state_graph(model: BaseChatModel, tools: list[BaseTool]) -> Any:
    """A hand-built graph: a model node and a ToolNode, routed by ``tools_condition``."""
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("llm", call_model)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "llm")
    graph.add_conditional_edges("llm", tools_condition)
    graph.add_edge("tools", "llm")
    return graph.compile()


AGENTS: dict[str, Callable[[BaseChatModel, list[BaseTool]], Any]] = {"react": react_agent, "graph": state_graph}


def build(agent: str, case: str) -> tuple[Any, Calls]:
    """A compiled graph running script ``case``, and the counter of what it actually called."""
    calls = Calls()
    model = ScriptedChatModel(script=SCRIPTS[case], calls=calls)
    return AGENTS[agent](model, [search_tool(calls, RESULTS[case])]), calls

