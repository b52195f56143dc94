"""A Microsoft Semantic Kernel agent re-runs one search and reads the same page every time; spanbreaker stops it, from
Semantic Kernel's own OpenTelemetry GenAI spans. Offline: the scripted OpenAI model answers the real ``openai`` client.

Semantic Kernel puts a kernel function call's arguments and result on its span only with its sensitive diagnostics on
(``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE=true``). Here its diagnostics stay off, its
default: spanbreaker's adapter shows the breaker each call in process, and the exported spans carry no arguments or
results (the example checks).

    python examples/semantic_kernel_search_loop.py        (with the [semantic-kernel] extra)
"""

from __future__ import annotations

import asyncio

import openai
from _report import print_trip
from _scripted_openai import ScriptedModel
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from semantic_kernel import Kernel
from semantic_kernel.agents import ChatCompletionAgent
from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
from semantic_kernel.functions import kernel_function

import spanbreaker

ATTEMPTS = 30  # Semantic Kernel's own bound on auto function calls
counts = {"search": 0}


class Research:
    @kernel_function(name="web_search", description="Search the web.")
    def web_search(self, query: str) -> str:
        counts["search"] += 1
        return "Acme Corp investor relations: guidance for 2026 will be published in March."


async def main() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)  # Semantic Kernel's spans go to the global provider
    spanbreaker.instrument(tracer_provider=provider)

    model = ScriptedModel(lambda messages: [("research-web_search", {"query": "acme 2026 revenue guidance"})])  # stuck
    client = model.client(openai.AsyncOpenAI, asynchronous=True, api_key="offline",
                          base_url="http://scripted.invalid/v1")
    kernel = Kernel()
    kernel.add_plugin(Research(), plugin_name="research")
    agent = ChatCompletionAgent(
        service=OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=client), kernel=kernel, name="analyst",
        instructions="Answer from the web.",
        function_choice_behavior=FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=ATTEMPTS))

    print(f"Asking a Semantic Kernel agent for Acme's guidance (auto-invoke limit {ATTEMPTS}) ...")
    try:
        await agent.get_response(messages="What is Acme's 2026 revenue guidance?")
        print("The agent finished without being stopped.")
        return
    except spanbreaker.Tripped as trip:
        print_trip(trip, exporter, f"model calls made: {model.calls}, web_search ran {counts['search']} times "
                   f"(the auto-invoke limit alone would allow {ATTEMPTS})", kind_key="gen_ai.operation.name")
        exported = [key for span in exporter.get_finished_spans() for key in (span.attributes or {})]
        hidden = not any(key.startswith(("gen_ai.tool.call.arguments", "gen_ai.tool.call.result")) for key in exported)
        print(f"tool arguments or results on the exported spans: {'none' if hidden else 'some'}")


if __name__ == "__main__":
    asyncio.run(main())
