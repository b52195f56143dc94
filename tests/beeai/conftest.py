"""Fixtures: a private TracerProvider per test with the breaker attached and BeeAI instrumented on it.

Never the global provider: other suites share the pytest process. Teardown undoes the instrumentation.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline: no fetch of LiteLLM's price table

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
import spanbreaker.instrumentation


@dataclass
class Traced:
    """What a test observes: the breaker, and every span exported."""

    provider: TracerProvider
    exporter: InMemorySpanExporter
    breaker: spanbreaker.BreakerSpanProcessor

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def kind(self, kind: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if (s.attributes or {}).get("openinference.span.kind") == kind]


@pytest.fixture
def traced() -> Iterator[Callable[..., Traced]]:
    """``traced(max_span_attributes=1024, **config_overrides)`` -> a provider with the breaker and BeeAI
    instrumented on it."""
    made: list[Traced] = []
    spanbreaker.instrumentation.uninstrument()  # a suite that left frameworks instrumented on its provider

    def make(max_span_attributes: int = 1024, **overrides: Any) -> Traced:
        provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=max_span_attributes))
        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        breaker = spanbreaker.instrument(tracer_provider=provider, config=spanbreaker.BreakerConfig(**overrides))
        assert breaker is not None
        made.append(Traced(provider, exporter, breaker))
        return made[-1]

    yield make
    spanbreaker.instrumentation.uninstrument()
    for item in made:
        item.provider.shutdown()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The retry tool's millisecond backoff is a float where BeeAI's schema says int (see scenarios.WeatherApi)."""
    for item in items:
        if "tests/beeai" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning"))
            item.add_marker(pytest.mark.filterwarnings("ignore::DeprecationWarning"))
