"""How the adapter is switched on and off: through ``spanbreaker.instrument()``, beside an application that
instrumented LangChain itself, and cleanly undone."""

from __future__ import annotations

import pytest
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
from spanbreaker.adapters.langchain import ADAPTER

from .conftest import run
from .scripted import build


def _provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_instrument_names_the_adapter_langchain_and_stops_a_loop() -> None:
    spanbreaker.instrumentation.uninstrument()
    provider, exporter = _provider()
    try:
        processor = spanbreaker.instrument(provider, frameworks=("langchain",))
        assert processor is not None
        graph, calls = build("react", "loop")
        with pytest.raises(spanbreaker.Tripped):
            run(graph, "sync")
        assert processor.stats.trips == 1 and calls.tools < 29
        assert [s for s in exporter.get_finished_spans() if (s.attributes or {}).get("spanbreaker.blocked")]
    finally:
        spanbreaker.instrumentation.uninstrument()
        provider.shutdown()


def test_an_application_that_instrumented_langchain_itself_keeps_its_instrumentor() -> None:
    spanbreaker.instrumentation.uninstrument()
    provider, exporter = _provider()
    theirs = LangChainInstrumentor()
    theirs.instrument(tracer_provider=provider)
    try:
        processor = spanbreaker.instrumentation.attach(provider, spanbreaker.BreakerConfig())
        ADAPTER.instrument(provider, processor)
        graph, calls = build("graph", "loop")
        with pytest.raises(spanbreaker.Tripped):
            run(graph, "stream")
        assert processor.stats.trips == 1
        assert [s for s in exporter.get_finished_spans() if (s.attributes or {}).get("spanbreaker.blocked")]
        ADAPTER.uninstrument()
        assert theirs.is_instrumented_by_opentelemetry, "the application's instrumentor was switched off"
        graph, calls = build("graph", "healthy")
        run(graph, "sync")
        assert calls.tools == 3
        assert processor.stats.trips == 1
    finally:
        ADAPTER.uninstrument()
        theirs.uninstrument()
        provider.shutdown()


def test_uninstrument_restores_the_instrumentor_as_it_was() -> None:
    from openinference.instrumentation.langchain._tracer import OpenInferenceTracer

    original = vars(OpenInferenceTracer)["_start_trace"]
    spanbreaker.instrumentation.uninstrument()
    provider, _ = _provider()
    processor = spanbreaker.instrumentation.attach(provider, spanbreaker.BreakerConfig())
    ADAPTER.instrument(provider, processor)
    ADAPTER.instrument(provider, processor)  # idempotent
    assert vars(OpenInferenceTracer)["_start_trace"] is not original
    ADAPTER.uninstrument()
    assert vars(OpenInferenceTracer)["_start_trace"] is original
    assert not LangChainInstrumentor().is_instrumented_by_opentelemetry
    provider.shutdown()
