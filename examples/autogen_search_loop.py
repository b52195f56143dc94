"""A Microsoft AutoGen ``AssistantAgent`` re-runs one search and reads the same page every time; spanbreaker stops
it, from AutoGen's own OpenTelemetry spans with spanbreaker's AutoGen adapter. Offline: the model is AutoGen's
``ReplayChatCompletionClient``, replaying the same tool call.

AutoGen's own ``execute_tool`` spans carry neither a call's arguments nor its result; the adapter puts them on the
span (arguments at start, result at the end), so the 5th identical search with the same page is vetoed before it
runs, and ``agent.run`` raises ``spanbreaker.Tripped`` (stock AutoGen would wait forever on the tool task the trip
ended: the adapter carries it out).

    pip install 'spanbreaker[autogen]'
    python examples/autogen_search_loop.py
"""

from __future__ import annotations

import asyncio
import logging

from _report import print_trip
from autogen_agentchat.agents import AssistantAgent
from autogen_core import EVENT_LOGGER_NAME, FunctionCall
from autogen_core.models import CreateResult, ModelFamily, ModelInfo, RequestUsage
from autogen_ext.models.replay import ReplayChatCompletionClient
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

ITERATIONS = 30
searches = 0


def stuck_model() -> ReplayChatCompletionClient:
    """Stands in for the LLM: asks for the same search, over and over."""
    replies = [CreateResult(content=[FunctionCall(id=f"call_{i}", name="web_search",
                                                  arguments='{"query": "acme 2026 revenue guidance"}')],
                            finish_reason="function_calls", usage=RequestUsage(prompt_tokens=900, completion_tokens=30),
                            cached=False)
               for i in range(ITERATIONS)]
    info = ModelInfo(vision=False, function_calling=True, json_output=False, family=ModelFamily.UNKNOWN,
                     structured_output=False)
    return ReplayChatCompletionClient([*replies, "I could not find it."], model_info=info)


async def web_search(query: str) -> str:
    """Search the web."""
    global searches
    searches += 1
    print(f"  search #{searches}: {query!r}")
    return "Acme Corp investor relations: guidance for 2026 will be published in March."


async def main() -> None:
    logging.getLogger(EVENT_LOGGER_NAME).setLevel(logging.ERROR)  # the replay model's token-count notes
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)  # AutoGen traces through the global provider
    spanbreaker.instrument(tracer_provider=provider, frameworks=("autogen",))

    agent = AssistantAgent("analyst", model_client=stuck_model(), tools=[web_search],
                           max_tool_iterations=ITERATIONS, system_message="Answer from the web.")
    print("Asking an AutoGen agent for Acme's guidance ...")
    try:
        # Optional for one agent (its invoke_agent span is the trace's root); a team run gets one from the adapter.
        with trace.get_tracer("example").start_as_current_span("analyst.run"):
            await agent.run(task="What is Acme's 2026 revenue guidance?")
        print("The agent finished without being stopped.")
    except spanbreaker.Tripped as trip:
        print_trip(trip, exporter, f"searches run: {searches} (AutoGen's own limit here, max_tool_iterations, "
                   f"allows {ITERATIONS})", kind_key="gen_ai.operation.name")


if __name__ == "__main__":
    asyncio.run(main())
