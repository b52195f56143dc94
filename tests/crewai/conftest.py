"""Fixtures for the CrewAI tier (``make test-crewai``, its own venv): a private TracerProvider per test, the real
instrumentor in either mode, the breaker.

Nothing here touches the global tracer provider; the adapter and the instrumentor are uninstrumented in teardown
so the next test starts clean.
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
from spanbreaker.engine import Stats
from spanbreaker.instrumentation import attach
from tests.framework_env import FrameworkEnv

from .scripted import MODES


@dataclass
class CrewAIEnv(FrameworkEnv):
    mode: str = "wrapper"

    def spans(self) -> tuple[ReadableSpan, ...]:
        from crewai.events import crewai_event_bus

        crewai_event_bus.flush()  # event-listener mode ends spans on CrewAI's handler threads
        return self.exporter.get_finished_spans()

    @property
    def stats(self) -> Stats:
        """The breaker's counts once CrewAI's handler threads are done with the run's events."""
        from crewai.events import crewai_event_bus

        crewai_event_bus.flush()
        return self.processor.stats


def instrument(provider: TracerProvider, processor: spanbreaker.BreakerSpanProcessor, mode: str) -> None:
    """The instrumentor in ``mode`` (event-listener mode is the application's choice: it instruments first), then
    spanbreaker's adapter."""
    from openinference.instrumentation.crewai import CrewAIInstrumentor

    from spanbreaker.adapters.crewai import ADAPTER
    from spanbreaker.adapters.openinference import ADAPTER as OPENINFERENCE

    if mode == "events":
        CrewAIInstrumentor().instrument(tracer_provider=provider, use_event_listener=True, create_llm_spans=True)
    ADAPTER.instrument(provider, processor)
    OPENINFERENCE.instrument(provider, processor)  # what spanbreaker.instrument() adds along with any framework


def uninstrument() -> None:
    from openinference.instrumentation.crewai import CrewAIInstrumentor

    from spanbreaker.adapters.crewai import ADAPTER
    from spanbreaker.adapters.openinference import ADAPTER as OPENINFERENCE

    ADAPTER.uninstrument()
    OPENINFERENCE.uninstrument()
    instrumentor = CrewAIInstrumentor()
    if instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.uninstrument()


@pytest.fixture
def make_env() -> Iterator[Callable[..., CrewAIEnv]]:
    """``make_env(instrumentor_mode, **config_overrides)``: instrument CrewAI on a fresh provider with a breaker of that
    config."""
    made: list[CrewAIEnv] = []

    def make(instrumentor_mode: str, **overrides: Any) -> CrewAIEnv:
        assert not made, "one environment per test"
        assert instrumentor_mode in MODES
        spanbreaker.instrumentation.uninstrument()
        provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))  # what instrument() sets
        processor = attach(provider, spanbreaker.BreakerConfig().replace(**overrides))
        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        instrument(provider, processor, instrumentor_mode)
        env = CrewAIEnv(provider, exporter, processor, instrumentor_mode)
        made.append(env)
        return env

    yield make
    uninstrument()
    for env in made:
        env.provider.shutdown()
