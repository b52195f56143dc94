"""How the adapter is switched on and off: through ``spanbreaker.instrument()``, beside an application that
instrumented LlamaIndex itself, and cleanly undone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
from spanbreaker.adapters.llama_index import ADAPTER

from .scripted import LOOP_LIMIT, build, run


def _provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_instrument_names_the_adapter_llama_index_and_stops_a_loop() -> None:
    spanbreaker.instrumentation.uninstrument()
    provider, exporter = _provider()
    try:
        processor = spanbreaker.instrument(provider, frameworks=("llama_index",))
        assert processor is not None
        agent, calls = build("loop")
        with pytest.raises(spanbreaker.Tripped):
            run(agent)
        assert processor.stats.trips == 1 and calls.tools < LOOP_LIMIT
        assert [s for s in exporter.get_finished_spans() if (s.attributes or {}).get("spanbreaker.blocked")]
    finally:
        spanbreaker.instrumentation.uninstrument()
        provider.shutdown()


def test_an_application_that_instrumented_llama_index_itself_keeps_its_instrumentor() -> None:
    spanbreaker.instrumentation.uninstrument()
    provider, exporter = _provider()
    theirs = LlamaIndexInstrumentor()
    theirs.instrument(tracer_provider=provider)
    try:
        processor = spanbreaker.instrumentation.attach(provider, spanbreaker.BreakerConfig())
        ADAPTER.instrument(provider, processor)
        agent, calls = build("loop", "stream")
        with pytest.raises(spanbreaker.Tripped):
            run(agent, "stream_events")
        assert processor.stats.trips == 1
        assert [s for s in exporter.get_finished_spans() if (s.attributes or {}).get("spanbreaker.blocked")]
        ADAPTER.uninstrument()
        assert theirs.is_instrumented_by_opentelemetry, "the application's instrumentor was switched off"
        agent, calls = build("healthy")
        run(agent)
        assert calls.tools == 3
        assert processor.stats.trips == 1
    finally:
        ADAPTER.uninstrument()
        theirs.uninstrument()
        provider.shutdown()


def test_uninstrument_restores_what_was_patched() -> None:
    from llama_index.core.instrumentation.dispatcher import Dispatcher  # type: ignore[attr-defined]
    from openinference.instrumentation.llama_index._handler import _SpanHandler
    from workflows.runtime.types import step_function

    patched = ((_SpanHandler, "new_span"), (Dispatcher, "span_enter"), (step_function, "as_step_worker_function"))
    originals = [vars(owner)[name] for owner, name in patched]
    spanbreaker.instrumentation.uninstrument()
    provider, _ = _provider()
    processor = spanbreaker.instrumentation.attach(provider, spanbreaker.BreakerConfig())
    ADAPTER.instrument(provider, processor)
    ADAPTER.instrument(provider, processor)  # idempotent
    assert all(vars(owner)[name] is not original for (owner, name), original in zip(patched, originals, strict=True))
    ADAPTER.uninstrument()
    assert all(vars(owner)[name] is original for (owner, name), original in zip(patched, originals, strict=True))
    assert not LlamaIndexInstrumentor().is_instrumented_by_opentelemetry
    provider.shutdown()


DEFERRED = """
import sys
import spanbreaker
from opentelemetry.sdk.trace import TracerProvider
spanbreaker.instrument(tracer_provider=TracerProvider())
print("imported before use:", "llama_index.core" in sys.modules)
from tests.llama_index.scripted import build, run
agent, calls = build("loop")
try:
    run(agent)
except spanbreaker.Tripped as trip:
    print("tripped:", trip.detector, "after", calls.tools, "tool calls")
"""


def test_llama_index_is_instrumented_when_the_application_imports_it() -> None:
    """``instrument()`` does not import LlamaIndex (over a second) for an application that has it installed; the
    application's own import instruments it."""
    repo = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", DEFERRED], capture_output=True, text=True, timeout=90, cwd=repo)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "imported before use: False" in result.stdout
    assert "tripped: tool_repeat after 4 tool calls" in result.stdout
