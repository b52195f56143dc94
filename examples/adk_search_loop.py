"""A Google ADK agent re-runs one search and reads the same page every time; spanbreaker stops it, from ADK's own
OpenTelemetry GenAI spans. Offline: the model is a scripted ADK ``BaseLlm``.

ADK puts a tool call's arguments and result on its span only with content capture on spans
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``), and only when the call ends. This example keeps
ADK's default, no content on spans: spanbreaker's ADK adapter (switched on by ``spanbreaker.instrument()``) shows
the breaker each call in process as it starts, so the 5th identical search is vetoed before it runs, and the exported
spans carry no arguments or results (the example checks). ``run_async`` raises ``spanbreaker.Tripped``; the sync
``Runner.run`` would raise ADK's ``RuntimeError('Agent run terminated by Tripped.')`` with the trip as its
``__cause__``.

    pip install 'spanbreaker[google-adk]'
    python examples/adk_search_loop.py
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from _report import print_trip
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

counts = {"search": 0, "model": 0}


class StuckModel(BaseLlm):
    """Stands in for Gemini: asks for the same search, over and over."""

    async def generate_content_async(self, llm_request: LlmRequest,
                                     stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        counts["model"] += 1
        call = types.FunctionCall(name="web_search", args={"query": "acme 2026 revenue guidance"},
                                  id=f"call_{counts['model']}")
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]),
                          finish_reason=types.FinishReason.STOP,
                          usage_metadata=types.GenerateContentResponseUsageMetadata(
                              prompt_token_count=900 + 40 * counts["model"], candidates_token_count=30))


def web_search(query: str) -> str:
    """Search the web."""
    counts["search"] += 1
    print(f"  search #{counts['search']}: {query!r}")
    return "Acme Corp investor relations: guidance for 2026 will be published in March."


async def main() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)  # ADK traces through the global provider
    spanbreaker.instrument(tracer_provider=provider)  # the breaker, and the adapters of what is installed (ADK's)

    agent = LlmAgent(name="analyst", model=StuckModel(model="stuck-model"), tools=[web_search],
                     instruction="Answer from the web.")
    runner = InMemoryRunner(agent=agent, app_name="analyst")
    session = await runner.session_service.create_session(app_name="analyst", user_id="user")
    question = types.Content(role="user", parts=[types.Part(text="What is Acme's 2026 revenue guidance?")])
    print("Asking an ADK agent for Acme's guidance ...")
    try:
        async for _event in runner.run_async(user_id="user", session_id=session.id, new_message=question):
            pass
        print("The agent finished without being stopped.")
    except spanbreaker.Tripped as trip:
        print_trip(trip, exporter, f"searches run: {counts['search']}, model calls: {counts['model']} "
                   f"(ADK's own limit, RunConfig.max_llm_calls, allows 500)", kind_key="gen_ai.operation.name")
        exported = [key for span in exporter.get_finished_spans() for key in (span.attributes or {})]
        hidden = not any(key.startswith(("gen_ai.tool.call.arguments", "gen_ai.tool.call.result")) for key in exported)
        print(f"tool arguments or results on the exported spans: {'none' if hidden else 'some'}")


if __name__ == "__main__":
    asyncio.run(main())
