"""A pydantic-ai agent re-runs one search and reads the same page every time; spanbreaker stops it, from
pydantic-ai's own OpenTelemetry GenAI spans. Offline: the model is pydantic-ai's ``FunctionModel``, scripted.

    python examples/pydantic_ai_search_loop.py
"""

from __future__ import annotations

from _report import print_trip
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, UsageLimits
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

import spanbreaker

REQUEST_LIMIT = 40
counts = {"model": 0, "search": 0}


def stuck_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Stands in for the LLM: asks for the same search, forever."""
    counts["model"] += 1
    return ModelResponse(parts=[ToolCallPart("web_search", {"query": "acme 2026 revenue guidance"})],
                         usage=RequestUsage(input_tokens=800 + 40 * counts["model"], output_tokens=25))


def main() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spanbreaker.instrument(tracer_provider=provider, frameworks=["pydantic_ai"])  # pydantic-ai's spans, here

    agent = Agent(FunctionModel(stuck_model, model_name="stuck-model"), name="analyst")

    @agent.tool_plain
    def web_search(query: str) -> str:
        """Search the web."""
        counts["search"] += 1
        return "Acme Corp investor relations: guidance for 2026 will be published in March."

    print(f"Asking a pydantic-ai agent for Acme's guidance (request_limit={REQUEST_LIMIT}) ...")
    try:
        agent.run_sync("What is Acme's 2026 revenue guidance?", usage_limits=UsageLimits(request_limit=REQUEST_LIMIT))
        print("The agent finished without being stopped.")
        return
    except spanbreaker.Tripped as trip:
        print_trip(trip, exporter, f"model calls made: {counts['model']}, web_search ran {counts['search']} times "
                   f"(request_limit alone would allow {REQUEST_LIMIT})", kind_key="gen_ai.operation.name")


if __name__ == "__main__":
    main()
