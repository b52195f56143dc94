"""A scripted LLM (the only stand-in: everything else is real LlamaIndex) and the agents the tests drive.

The model answers from a script: ``script(turn)`` returns the tool calls to make (a list of ``(tool, arguments)``)
or the final text. Three scripts stand for the cases every detector is proven on:

* ``loop``: the same search, with the same arguments, returning the same result, turn after turn;
* ``healthy``: three different searches, then an answer;
* ``wide``: six different searches that all return the same text (normal research: nothing to stop).

The agent is LlamaIndex's ``FunctionAgent`` (a workflow), its model streaming or not; a ``ReActAgent`` and a
multi-agent ``AgentWorkflow`` with a handoff run the loop too.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ReActAgent
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    MessageRole,
    ToolCallBlock,
)
from llama_index.core.llms.callbacks import llm_chat_callback
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool

Script = Callable[[int], "list[tuple[str, dict[str, Any]]] | str"]
USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
MAX_ITERATIONS = 30
"""LlamaIndex's own guard (``agent.run(..., max_iterations=)``; its default is 20)."""
LOOP_LIMIT = MAX_ITERATIONS - 1
"""Tool calls a looping agent makes when nothing stops it."""
RUN_TIMEOUT_S = 30.0
MODES = ("await", "stream_events")
"""How the caller runs the agent: ``await agent.run(...)``, or streaming its events and then awaiting it."""
MODELS = ("chat", "stream")
"""The agent's model call: ``achat`` or ``astream_chat`` (``FunctionAgent(streaming=...)``)."""


@dataclass
class Calls:
    """What actually ran: model turns and tool executions (a vetoed call never runs)."""

    model: int = 0
    tools: int = 0
    queries: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class ScriptedLLM(MockFunctionCallingLLM):
    """LlamaIndex's function-calling mock, answering from a script and reporting token usage."""

    def __init__(self, script: Script, calls: Calls) -> None:
        super().__init__()
        self._script = script
        self._calls = calls

    def _answer(self) -> ChatMessage:
        with self._calls.lock:
            turn = self._calls.model
            self._calls.model += 1
        answer = self._script(turn)
        if isinstance(answer, str):
            return ChatMessage(role=MessageRole.ASSISTANT, content=answer)
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[
            ToolCallBlock(tool_call_id=f"call_{turn}_{n}", tool_name=name, tool_kwargs=args)
            for n, (name, args) in enumerate(answer)])

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        message = self._answer()
        return ChatResponse(message=message, delta=message.content or "", raw={"usage": USAGE})

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        message = self._answer()
        return ChatResponse(message=message, delta=message.content or "", raw={"usage": USAGE})

    @llm_chat_callback()
    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseAsyncGen:
        message = self._answer()

        async def gen() -> AsyncGenerator[ChatResponse, None]:
            yield ChatResponse(message=message, delta=message.content or "", raw={"usage": USAGE})

        return gen()


def loop(turn: int) -> list[tuple[str, dict[str, Any]]] | str:
    return [("search", {"query": "weather in Paris"})]


HEALTHY_QUERIES = ("weather in Paris", "weather in Rome", "weather in Oslo")
WIDE_QUERIES = ("hotels in Paris", "hotels in Lyon", "hotels in Nice", "hotels in Lille", "hotels in Nantes",
                "hotels in Brest")


def _queries(queries: Sequence[str], answer: str) -> Script:
    def script(turn: int) -> list[tuple[str, dict[str, Any]]] | str:
        return [("search", {"query": queries[turn]})] if turn < len(queries) else answer
    return script


healthy = _queries(HEALTHY_QUERIES, "Sunny everywhere.")
wide = _queries(WIDE_QUERIES, "No hotel data anywhere.")
SCRIPTS: dict[str, Script] = {"loop": loop, "healthy": healthy, "wide": wide}
ANSWERS = {"healthy": "Sunny everywhere.", "wide": "No hotel data anywhere."}
RESULTS = {"loop": "Paris weather: sunny, 20C", "healthy": "{query}: sunny, 20C", "wide": "no results yet"}
"""What the search tool returns in each case (``{query}`` is filled in)."""


def search_tool(calls: Calls, result: str) -> FunctionTool:
    def search(query: str) -> str:
        """Search the web."""
        with calls.lock:
            calls.tools += 1
            calls.queries.append(query)
        return result.format(query=query)

    return FunctionTool.from_defaults(search)


def build(case: str, model: str = "chat") -> tuple[FunctionAgent, Calls]:
    """A ``FunctionAgent`` running script ``case``, and the counter of what it actually called."""
    calls = Calls()
    llm = ScriptedLLM(SCRIPTS[case], calls)
    agent = FunctionAgent(tools=[search_tool(calls, RESULTS[case])], llm=llm, system_prompt="Answer.",
                          streaming=model == "stream")
    return agent, calls


def run(agent: Any, mode: str = "await", question: str = "What's the weather?") -> Any:
    """Run the agent to its end in one of :data:`MODES`; return its output."""

    async def go() -> Any:
        handler = agent.run(question, max_iterations=MAX_ITERATIONS)
        if mode == "stream_events":
            async for _event in handler.stream_events():
                pass
        return await handler

    return asyncio.run(asyncio.wait_for(go(), RUN_TIMEOUT_S))


REACT_SEARCH = 'Thought: I need to search.\nAction: search\nAction Input: {"query": "weather in Paris"}'
"""What a ``ReActAgent``'s model writes to call the search tool (ReAct parses text, not tool calls)."""


def build_react() -> tuple[ReActAgent, Calls]:
    """A ``ReActAgent`` whose model writes the same search, turn after turn."""
    calls = Calls()
    llm = ScriptedLLM(lambda turn: REACT_SEARCH, calls)
    return ReActAgent(tools=[search_tool(calls, RESULTS["loop"])], llm=llm), calls


def build_handoff() -> tuple[AgentWorkflow, Calls]:
    """An ``AgentWorkflow``: a front agent hands off to a researcher, which then loops on one search."""
    calls = Calls()

    def script(turn: int) -> list[tuple[str, dict[str, Any]]] | str:
        if turn == 0:
            return [("handoff", {"to_agent": "researcher", "reason": "needs a search"})]
        return [("search", {"query": "weather in Paris"})]

    llm = ScriptedLLM(script, calls)
    front = FunctionAgent(name="front", description="Front desk", tools=[], llm=llm, can_handoff_to=["researcher"])
    researcher = FunctionAgent(name="researcher", description="Searches the web",
                               tools=[search_tool(calls, RESULTS["loop"])], llm=llm)
    return AgentWorkflow(agents=[front, researcher], root_agent="front"), calls
