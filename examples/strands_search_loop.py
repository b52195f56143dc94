"""A Strands agent re-runs one search and reads the same page every time; spanbreaker stops it, from Strands' own
OpenTelemetry GenAI spans. Offline: the model is a scripted Strands ``Model``.

    python examples/strands_search_loop.py
"""

from __future__ import annotations

from _report import print_trip
from _scripted_strands import Scripted
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from strands import Agent, tool

import spanbreaker

TURN_LIMIT = 40
counts = {"search": 0}


@tool
def web_search(query: str) -> str:
    """Search the web.

    Args:
        query: what to look up
    """
    counts["search"] += 1
    return "Acme Corp investor relations: guidance for 2026 will be published in March."


def main() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spanbreaker.instrument(tracer_provider=provider, frameworks=["strands"])  # Strands' spans, here

    model = Scripted(lambda results: [("web_search", {"query": "acme 2026 revenue guidance"})],  # stuck
                     model_id="stuck-model")
    agent = Agent(model=model, tools=[web_search], name="analyst", callback_handler=None)

    print(f"Asking a Strands agent for Acme's guidance (turn limit {TURN_LIMIT}) ...")
    try:
        agent("What is Acme's 2026 revenue guidance?", limits={"turns": TURN_LIMIT})
        print("The agent finished without being stopped.")
        return
    except spanbreaker.Tripped as trip:
        print_trip(trip, exporter, f"model calls made: {model.calls}, web_search ran {counts['search']} times "
                   f"(the turn limit alone would allow {TURN_LIMIT})", kind_key="gen_ai.operation.name")


if __name__ == "__main__":
    main()
