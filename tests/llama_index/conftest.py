"""Fixtures for the LlamaIndex suite: a private TracerProvider per test, the real instrumentor, the breaker.

Nothing here touches the global tracer provider (other suites share the pytest process); the adapter is
uninstrumented in teardown so the next test starts clean.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
from spanbreaker.adapters.llama_index import ADAPTER
from spanbreaker.instrumentation import attach
from tests.exported import assert_exported_once


@dataclass
class LlamaIndexEnv:
    provider: TracerProvider
    exporter: InMemorySpanExporter
    processor: spanbreaker.BreakerSpanProcessor

    def spans(self) -> tuple[ReadableSpan, ...]:
        return self.exporter.get_finished_spans()

    def marked(self, key: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if (s.attributes or {}).get(key) is True]

    def of_kind(self, kind: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if (s.attributes or {}).get("openinference.span.kind") == kind]

    def assert_nothing_lost(self) -> None:
        """Every span the breaker saw start was ended and exported exactly once."""
        assert_exported_once(self.spans(), self.processor)


@pytest.fixture
def make_env() -> Iterator[Callable[..., LlamaIndexEnv]]:
    """``make_env(**config_overrides)``: instrument LlamaIndex on a fresh provider with a breaker of that config."""
    made: list[LlamaIndexEnv] = []

    def make(**overrides: Any) -> LlamaIndexEnv:
        assert not made, "one environment per test"
        spanbreaker.instrumentation.uninstrument()  # a suite that left frameworks instrumented on its provider
        provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))  # what instrument() sets
        processor = attach(provider, spanbreaker.BreakerConfig().replace(**overrides))
        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        ADAPTER.instrument(provider, processor)
        env = LlamaIndexEnv(provider, exporter, processor)
        made.append(env)
        return env

    yield make
    ADAPTER.uninstrument()
    for env in made:
        env.provider.shutdown()


@pytest.fixture
def env(make_env: Callable[..., LlamaIndexEnv]) -> LlamaIndexEnv:
    return make_env()
