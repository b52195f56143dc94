"""A private TracerProvider with the breaker and one framework adapter, per test: what the LangGraph and
LlamaIndex suites share (their conftests only name the adapter).

Nothing here touches the global tracer provider (other suites share the pytest process); the adapter is
uninstrumented in teardown so the next test starts clean.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
from spanbreaker.adapters.base import Adapter
from spanbreaker.adapters.openinference import ADAPTER as OPENINFERENCE
from spanbreaker.instrumentation import attach
from tests.exported import assert_exported_once


@dataclass
class FrameworkEnv:
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


def env_factory(adapter: Adapter) -> Iterator[Callable[..., FrameworkEnv]]:
    """Body of a ``make_env`` fixture: ``make_env(**config_overrides)`` instruments the framework on a fresh
    provider with a breaker of that config (one environment per test); teardown undoes it."""
    made: list[FrameworkEnv] = []

    def make(**overrides: Any) -> FrameworkEnv:
        assert not made, "one environment per test"
        spanbreaker.instrumentation.uninstrument()  # a suite that left frameworks instrumented on its provider
        provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))  # what instrument() sets
        processor = attach(provider, spanbreaker.BreakerConfig().replace(**overrides))
        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        adapter.instrument(provider, processor)
        OPENINFERENCE.instrument(provider, processor)  # what spanbreaker.instrument() adds along with any framework
        env = FrameworkEnv(provider, exporter, processor)
        made.append(env)
        return env

    yield make
    adapter.uninstrument()
    OPENINFERENCE.uninstrument()
    for env in made:
        env.provider.shutdown()
