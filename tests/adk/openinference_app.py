"""A Google ADK agent with OpenInference's ADK instrumentor (``GoogleADKInstrumentor``, as Phoenix's
``register(auto_instrument=True)`` turns it on) and the breaker. One scenario per process: the instrumentor patches ADK
for the life of the process. The model is the tier's scripted ``BaseLlm``; the last stdout line is a JSON summary.

    python tests/adk/openinference_app.py [--scenario stuck|wide]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the tests package: the scripted model

TOPICS = [f"weather in {city}" for city in ("Paris", "Rome", "Oslo", "Lima", "Pune", "Cork")]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=("stuck", "wide"), default="stuck")
    args = parser.parse_args()

    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner
    from google.genai import types
    from openinference.instrumentation.google_adk import GoogleADKInstrumentor
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    import spanbreaker
    from tests.adk.scripted import loop, queries, scripted

    provider = TracerProvider()
    trace.set_tracer_provider(provider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    GoogleADKInstrumentor().instrument(tracer_provider=provider)
    spanbreaker.instrument()
    searches: list[str] = []

    def search(query: str) -> str:
        """Search the web."""
        searches.append(query)
        return "No results." if args.scenario == "stuck" else f"{query}: sunny"

    model = scripted(loop() if args.scenario == "stuck" else queries(TOPICS))
    agent = LlmAgent(name="weather_agent", model=model, instruction="Answer using the search tool.", tools=[search])
    runner = InMemoryRunner(agent=agent, app_name="weather")

    async def run() -> None:
        session = await runner.session_service.create_session(app_name="weather", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="What's the weather?")])
        async for _event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass

    summary: dict[str, Any] = {"outcome": "answered", "detector": None}
    try:
        asyncio.run(asyncio.wait_for(run(), 60))
    except spanbreaker.Tripped as trip:
        summary.update(outcome="stopped", detector=trip.detector)
    spans = exporter.get_finished_spans()
    summary.update(
        model_calls=model.calls, searches=len(searches),
        openinference=sum(1 for s in spans if (s.attributes or {}).get("openinference.span.kind") == "TOOL"),
        blocked=[s.name for s in spans if (s.attributes or {}).get("spanbreaker.blocked")],
        unique=len({s.context.span_id for s in spans}) == len(spans))
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
