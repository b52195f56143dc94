"""Fixtures for the LangGraph suite: a private TracerProvider per test, the real instrumentor, the breaker.

Nothing here touches the global tracer provider (other suites share the pytest process); the adapter is
uninstrumented in teardown so the next test starts clean.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
from spanbreaker.adapters.langchain import ADAPTER
from spanbreaker.instrumentation import attach
from tests.exported import assert_exported_once

from .scripted import RECURSION_LIMIT

MODES = ("sync", "async", "stream", "astream")
RUN_TIMEOUT_S = 30.0


@dataclass
class LangGraphEnv:
    provider: TracerProvider
    exporter: InMemorySpanExporter
    processor: spanbreaker.BreakerSpanProcessor

    def spans(self) -> tuple[ReadableSpan, ...]:
        return self.exporter.get_finished_spans()

    def marked(self, key: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if (s.attributes or {}).get(key) is True]

    def assert_nothing_lost(self) -> None:
        """Every span the breaker saw start was ended and exported exactly once."""
        assert_exported_once(self.spans(), self.processor)


@pytest.fixture
def make_env() -> Iterator[Callable[..., LangGraphEnv]]:
    """``make_env(**config_overrides)``: instrument LangChain on a fresh provider with a breaker of that config."""
    made: list[LangGraphEnv] = []

    def make(**overrides: Any) -> LangGraphEnv:
        assert not made, "one environment per test"
        spanbreaker.instrumentation.uninstrument()  # a suite that left frameworks instrumented on its provider
        provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))  # what instrument() sets
        processor = attach(provider, spanbreaker.BreakerConfig().replace(**overrides))
        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        ADAPTER.instrument(provider, processor)
        env = LangGraphEnv(provider, exporter, processor)
        made.append(env)
        return env

    yield make
    ADAPTER.uninstrument()
    for env in made:
        env.provider.shutdown()


@pytest.fixture
def env(make_env: Callable[..., LangGraphEnv]) -> LangGraphEnv:
    return make_env()


def run(graph: Any, mode: str, question: str = "What's the weather?") -> Any:
    """Run a compiled graph in one of the four modes; return its final state (or the last streamed chunk)."""
    state = {"messages": [("user", question)]}
    config = {"recursion_limit": RECURSION_LIMIT}
    if mode == "sync":
        return graph.invoke(state, config)
    if mode == "stream":
        return list(graph.stream(state, config))[-1]
    if mode == "async":
        return asyncio.run(asyncio.wait_for(graph.ainvoke(state, config), RUN_TIMEOUT_S))

    async def consume() -> Any:
        return [chunk async for chunk in graph.astream(state, config)][-1]

    return asyncio.run(asyncio.wait_for(consume(), RUN_TIMEOUT_S))
