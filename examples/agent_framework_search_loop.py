"""A Microsoft Agent Framework agent re-runs one search and reads the same page every time; spanbreaker stops it,
from Agent Framework's own OpenTelemetry GenAI spans. Offline: the model is a scripted chat client.

Agent Framework puts a tool call's arguments and result on its span only with sensitive data on
(``enable_instrumentation(enable_sensitive_data=True)`` or ``ENABLE_SENSITIVE_DATA=true``). Here it stays off, Agent
Framework's default: spanbreaker's adapter shows the breaker each call in process, and the exported spans carry no
arguments or results (the example checks). Model-call, token and cost budgets work either way.

    python examples/agent_framework_search_loop.py
"""

from __future__ import annotations

import asyncio

from _report import print_trip
from _scripted_agent_framework import Scripted
from agent_framework import Agent, tool
from agent_framework.observability import enable_instrumentation
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

ITERATION_LIMIT = 40  # Agent Framework's own bound on function-calling rounds
counts = {"search": 0}


@tool
def web_search(query: str) -> str:
    """Search the web."""
    counts["search"] += 1
    return "Acme Corp investor relations: guidance for 2026 will be published in March."


async def main() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)  # Agent Framework's spans go to the global provider
    spanbreaker.instrument(tracer_provider=provider)
    enable_instrumentation()  # Agent Framework's spans on; sensitive data off, its default

    client = Scripted(lambda results: [("web_search", {"query": "acme 2026 revenue guidance"})],  # stuck
                      model="stuck-model")
    agent = Agent(client=client, name="analyst", instructions="Answer from the web.", tools=[web_search])

    print(f"Asking an Agent Framework agent for Acme's guidance (iteration limit {ITERATION_LIMIT}) ...")
    try:
        await agent.run("What is Acme's 2026 revenue guidance?")
        print("The agent finished without being stopped.")
        return
    except spanbreaker.Tripped as trip:
        print_trip(trip, exporter, f"model calls made: {client.calls}, web_search ran {counts['search']} times "
                   f"(the iteration limit alone would allow {ITERATION_LIMIT})", kind_key="gen_ai.operation.name")
        exported = [key for span in exporter.get_finished_spans() for key in (span.attributes or {})]
        hidden = not any(key.startswith(("gen_ai.tool.call.arguments", "gen_ai.tool.call.result")) for key in exported)
        print(f"tool arguments or results on the exported spans: {'none' if hidden else 'some'}")


if __name__ == "__main__":
    asyncio.run(main())
