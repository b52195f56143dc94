"""A scripted CrewAI LLM (the only stand-in: everything else is real CrewAI) and the crews the tests drive.

The model answers from a script: ``script(turn)`` returns the tool calls to make (a list of ``(tool, arguments)``,
handed to CrewAI's native tool calling) or the final text. Three scripts stand for the cases every detector is
proven on:

* ``loop``: the same search, with the same arguments, returning the same result, turn after turn;
* ``healthy``: three different searches, then an answer;
* ``wide``: six different searches that all return the same text (normal research: nothing to stop).

The crew is one agent with one task and a ``search`` tool; the agent's tool cache is off, as it must be for a
loop to reach the tool at all (with it on, CrewAI answers repeats from its cache).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("OTEL_SDK_DISABLED", "false")

from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM, LLMCallType, llm_call_context
from crewai.tools import tool

Script = Callable[[int], "list[tuple[str, dict[str, Any]]] | str"]
USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
MAX_ITER = 15
"""CrewAI's own guard on the agent's turns (``Agent(max_iter=)``; its default is 25)."""
CREWAI_GUARD = 5
"""CrewAI 1.15 stops an agent itself after this many identical calls with one result (``ToolExecutionFailedError``)."""
KICKOFFS = ("kickoff", "kickoff_async", "akickoff")
"""How the caller runs the crew: sync, the sync run in a thread, or CrewAI's native async run."""
RUN_TIMEOUT_S = 60.0
MODES = ("wrapper", "events")
"""The instrumentor's two modes: wrapping CrewAI's methods (its default) or listening to CrewAI's event bus."""


@dataclass
class Calls:
    """What actually ran: model turns and tool executions (a vetoed call never runs)."""

    model: int = 0
    tools: int = 0
    queries: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class ScriptedLLM(BaseLLM):
    """Answers from a script through CrewAI's native tool calling, emitting CrewAI's own LLM call events."""

    script: Any = None
    calls: Any = None

    def supports_function_calling(self) -> bool:
        return True

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> Any:
        with llm_call_context():
            self._emit_call_started_event(messages=messages, tools=tools, from_task=from_task, from_agent=from_agent)
            with self.calls.lock:
                turn = self.calls.model
                self.calls.model += 1
            answer = self.script(turn)
            if isinstance(answer, str):
                out: Any = answer
            else:
                out = [{"id": f"call_{turn}_{n}", "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)}}
                       for n, (name, args) in enumerate(answer)]
            self._emit_call_completed_event(
                response=out, call_type=LLMCallType.LLM_CALL if isinstance(out, str) else LLMCallType.TOOL_CALL,
                from_task=from_task, from_agent=from_agent, messages=messages, usage=USAGE)
            return out


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


def build(case: str, cache: bool = False) -> tuple[Crew, Calls]:
    """A one-agent crew running script ``case``, and the counter of what it actually called."""
    calls = Calls()

    @tool("search")
    def search(query: str) -> str:
        """Search the web."""
        with calls.lock:
            calls.tools += 1
            calls.queries.append(query)
        return RESULTS[case].format(query=query)

    llm = ScriptedLLM(model="scripted", script=SCRIPTS[case], calls=calls)
    agent = Agent(role="Weather researcher", goal="Find the weather", backstory="You look things up.",
                  tools=[search], llm=llm, max_iter=MAX_ITER, cache=cache, verbose=False)
    task = Task(description="What's the weather?", expected_output="A short answer", agent=agent)
    return Crew(agents=[agent], tasks=[task], verbose=False), calls


def kickoff(crew: Crew, how: str = "kickoff") -> Any:
    """Run the crew one of the :data:`KICKOFFS` ways; return its output."""
    if how == "kickoff":
        return crew.kickoff()
    return asyncio.run(asyncio.wait_for(getattr(crew, how)(), RUN_TIMEOUT_S))
