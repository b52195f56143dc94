"""A BeeAI RequirementAgent in a fixation spiral, stopped by spanbreaker. Offline: the model is scripted.

The agent keeps rewording one web search ("python opentelemetry span processor example", "... examples",
"... span-processor ...") and keeps getting the same page back. BeeAI's own limits would let it go on for
``max_iterations`` model calls; spanbreaker's ``input_fixation`` detector stops it after a handful, before
the next model call is paid for.

    python examples/beeai_fixation_spiral.py
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncGenerator
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # stay offline

from _report import print_trip_marks
from beeai_framework.agents.requirement import RequirementAgent
from beeai_framework.backend import AssistantMessage, ChatModel, MessageToolCallContent
from beeai_framework.backend.types import ChatModelInput, ChatModelOutput, ChatModelUsage
from beeai_framework.context import RunContext
from beeai_framework.tools import tool
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

PARAPHRASES = (
    "python opentelemetry span processor example",
    "python opentelemetry span processor examples",
    "python opentelemetry span-processor example",
    "example python opentelemetry span processor",
    "python open telemetry span processor example",
    "python opentelemetry spanprocessor example",
)
MAX_ITERATIONS = 20


class SpiralModel(ChatModel):
    """Stands in for the LLM: asks for a reworded search, forever."""

    calls = 0

    @property
    def model_id(self) -> str:
        return "spiral-model"

    @property
    def provider_id(self) -> Any:
        return "ollama"

    def _reply(self) -> ChatModelOutput:
        query = PARAPHRASES[self.calls % len(PARAPHRASES)]
        self.calls += 1
        call = MessageToolCallContent(id=f"call_{self.calls}", tool_name="web_search",
                                      args=json.dumps({"query": query}))
        return ChatModelOutput(output=[AssistantMessage(call)],
                               usage=ChatModelUsage(prompt_tokens=900, completion_tokens=30, total_tokens=930))

    async def _create(self, input: ChatModelInput, run: RunContext) -> ChatModelOutput:
        return self._reply()

    async def _create_stream(self, input: ChatModelInput, run: RunContext) -> AsyncGenerator[ChatModelOutput]:
        yield self._reply()


@tool
def web_search(query: str) -> str:
    """Search the web."""
    return ("1. Processors - opentelemetry.io/docs/concepts/signals/traces: span processors receive spans on "
            "start and on end. 2. SDK reference - opentelemetry-python.readthedocs.io")


async def main() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spanbreaker.instrument(tracer_provider=provider)  # the breaker, and BeeAI's live spans on this provider

    model = SpiralModel()
    agent = RequirementAgent(llm=model, tools=[web_search], name="researcher")
    print(f"Asking a BeeAI RequirementAgent for examples (max_iterations={MAX_ITERATIONS}) ...")
    try:
        await agent.run("Find a Python example of an OpenTelemetry span processor", max_iterations=MAX_ITERATIONS)
        print("The agent finished without being stopped.")
        return
    except spanbreaker.Tripped as trip:
        print(f"\nspanbreaker tripped: [{trip.detector}] {trip.reason}")
        print(f"  model calls made: {model.calls} (max_iterations alone would allow {MAX_ITERATIONS})")
        print(f"  evidence: {trip.evidence}")
        print(f"  trace: {trip.trace_id}")
    print_trip_marks(exporter)


if __name__ == "__main__":
    asyncio.run(main())
