"""A CrewAI crew whose researcher is stuck re-running one search, stopped by spanbreaker, with the instrumentor in
event-listener mode (its spans start on CrewAI's event-handler threads). Offline: the model is scripted.

The model keeps asking for the same search and the tool keeps returning the same page. CrewAI's own guard would
stop the agent after the 5th identical call; spanbreaker vetoes the 5th before it runs, although the span that
decides starts on another thread, and ``spanbreaker.Tripped`` comes out of ``crew.kickoff()``.

    pip install 'spanbreaker[crewai]'
    python examples/crewai_search_loop.py
"""

from __future__ import annotations

import json
import os
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from _report import print_trip
from crewai import Agent, Crew, Task
from crewai.events import crewai_event_bus
from crewai.llms.base_llm import BaseLLM, LLMCallType, llm_call_context
from crewai.tools import tool
from openinference.instrumentation.crewai import CrewAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

searches = 0


class StuckModel(BaseLLM):
    """Stands in for the LLM: asks for the same search, forever (CrewAI's native tool calling)."""

    turns: int = 0

    def supports_function_calling(self) -> bool:
        return True

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> Any:
        with llm_call_context():
            self._emit_call_started_event(messages=messages, tools=tools, from_task=from_task, from_agent=from_agent)
            self.turns += 1
            calls = [{"id": f"call_{self.turns}", "type": "function", "function": {
                "name": "web_search", "arguments": json.dumps({"query": "crewai memory postgres setup"})}}]
            usage = {"prompt_tokens": 900 + 40 * self.turns, "completion_tokens": 30}
            self._emit_call_completed_event(response=calls, call_type=LLMCallType.TOOL_CALL, from_task=from_task,
                                            from_agent=from_agent, messages=messages, usage=usage)
            return calls


@tool("web_search")
def web_search(query: str) -> str:
    """Search the web."""
    global searches
    searches += 1
    print(f"  search #{searches}: {query!r}")
    return "1. Memory - docs.crewai.com/concepts/memory: configure a storage backend (...)"


def main() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    # The application chose the event-listener mode; spanbreaker keeps it and adds its stop.
    CrewAIInstrumentor().instrument(tracer_provider=provider, use_event_listener=True)
    spanbreaker.instrument(tracer_provider=provider, frameworks=("crewai",))

    model = StuckModel(model="stuck-model")
    researcher = Agent(role="Researcher", goal="Answer from the docs", backstory="You read documentation.",
                       tools=[web_search], llm=model, cache=False, verbose=False)
    task = Task(description="How do I give a crew Postgres-backed memory?", expected_output="Setup steps",
                agent=researcher)
    print("Asking a CrewAI researcher how to set up Postgres-backed memory ...")
    try:
        Crew(agents=[researcher], tasks=[task], verbose=False).kickoff()
    except spanbreaker.Tripped as trip:
        crewai_event_bus.flush()  # the event listener ends its spans on CrewAI's handler threads
        print_trip(trip, exporter, f"searches run: {searches}, model calls: {model.turns} "
                                   "(CrewAI's own guard would stop at the 5th identical search)")
        return
    print("The crew finished without being stopped.")


if __name__ == "__main__":
    main()
