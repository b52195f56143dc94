"""A LlamaIndex ``FunctionAgent`` stuck re-running one search, stopped by spanbreaker. Offline: the model is
scripted.

The model keeps asking for the same search and the tool keeps returning the same page. LlamaIndex's own guard,
``max_iterations``, would let it run ``MAX_ITERATIONS - 1`` tool calls; spanbreaker stops it after a handful. The
stop gets past LlamaIndex's instrumentation dispatcher (which swallows whatever a span handler raises): the
vetoed search never runs, the workflow's event stream ends, and ``spanbreaker.Tripped`` comes out of
``await handler``.

    pip install 'spanbreaker[llama-index]'
    python examples/llama_index_search_loop.py
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from _report import print_trip
from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole, ToolCallBlock
from llama_index.core.llms.callbacks import llm_chat_callback
from llama_index.core.llms.mock import MockFunctionCallingLLM
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

MAX_ITERATIONS = 40
searches = 0


class StuckModel(MockFunctionCallingLLM):
    """Stands in for the LLM: asks for the same search, forever."""

    turns: int = 0

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        self.turns += 1
        call = ToolCallBlock(tool_call_id=f"call_{self.turns}", tool_name="web_search",
                             tool_kwargs={"query": "llama-index vector store postgres setup"})
        usage = {"prompt_tokens": 900 + 40 * self.turns, "completion_tokens": 30}
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, blocks=[call]), raw={"usage": usage})


def web_search(query: str) -> str:
    """Search the web."""
    global searches
    searches += 1
    return "1. PGVectorStore - docs.llamaindex.ai/vector_stores/postgres: PGVectorStore.from_params(...)"


async def ask(agent: FunctionAgent) -> None:
    handler = agent.run("How do I set up a Postgres vector store?", max_iterations=MAX_ITERATIONS)
    async for event in handler.stream_events():
        if isinstance(event, ToolCallResult):
            print(f"  search #{searches}: {event.tool_kwargs['query']!r}")
    await handler


def main() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spanbreaker.instrument(tracer_provider=provider, frameworks=("llama_index",))  # breaker + LlamaIndex spans

    model = StuckModel()
    agent = FunctionAgent(tools=[web_search], llm=model, system_prompt="Answer from the docs.", streaming=False)
    print(f"Asking a LlamaIndex FunctionAgent how to set up a Postgres vector store "
          f"(max_iterations={MAX_ITERATIONS}) ...")
    try:
        asyncio.run(ask(agent))
    except spanbreaker.Tripped as trip:
        print_trip(trip, exporter, f"searches run: {searches}, model calls: {model.turns} "
                                   f"(max_iterations alone would allow {MAX_ITERATIONS - 1} searches)")
        return
    print("The agent finished without being stopped.")


if __name__ == "__main__":
    main()
