"""How the adapter is switched on and off: through ``spanbreaker.instrument()`` (wrapper mode), beside an
application that instrumented CrewAI itself in event-listener mode, and cleanly undone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

from .conftest import uninstrument
from .scripted import CREWAI_GUARD, build


def _provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_instrument_names_the_adapter_crewai_and_stops_a_loop() -> None:
    spanbreaker.instrumentation.uninstrument()
    provider, exporter = _provider()
    try:
        processor = spanbreaker.instrument(provider, frameworks=("crewai",))
        assert processor is not None
        crew, calls = build("loop")
        with pytest.raises(spanbreaker.Tripped):
            crew.kickoff()
        assert processor.stats.trips == 1 and calls.tools < CREWAI_GUARD
        assert [s for s in exporter.get_finished_spans() if (s.attributes or {}).get("spanbreaker.blocked")]
    finally:
        spanbreaker.instrumentation.uninstrument()
        uninstrument()
        provider.shutdown()


def test_uninstrument_restores_what_was_patched_and_keeps_the_application_instrumentor() -> None:
    from crewai import Crew
    from crewai.events import event_bus
    from openinference.instrumentation.crewai import CrewAIInstrumentor
    from openinference.instrumentation.crewai._wrappers import _BaseToolRunWrapper

    from spanbreaker.adapters.crewai import ADAPTER

    spanbreaker.instrumentation.uninstrument()
    provider, _ = _provider()
    theirs = CrewAIInstrumentor()
    theirs.instrument(tracer_provider=provider, use_event_listener=True)
    patched = ((_BaseToolRunWrapper, "_run_with_span"), (event_bus, "is_call_handler_safe"),
               (event_bus.CrewAIEventsBus, "emit"), (Crew, "kickoff"))
    originals = [vars(owner)[name] for owner, name in patched]
    try:
        processor = spanbreaker.instrumentation.attach(provider, spanbreaker.BreakerConfig())
        ADAPTER.instrument(provider, processor)
        ADAPTER.instrument(provider, processor)  # idempotent
        assert all(vars(owner)[name] is not o for (owner, name), o in zip(patched, originals, strict=True))
        ADAPTER.uninstrument()
        assert all(vars(owner)[name] is o for (owner, name), o in zip(patched, originals, strict=True))
        assert theirs.is_instrumented_by_opentelemetry, "the application's instrumentor was switched off"
    finally:
        uninstrument()
        provider.shutdown()


DEFERRED = """
import sys
import spanbreaker
from opentelemetry.sdk.trace import TracerProvider
spanbreaker.instrument(tracer_provider=TracerProvider())
print("imported before use:", "crewai" in sys.modules)
from tests.crewai.scripted import build
crew, calls = build("loop")
try:
    crew.kickoff()
except spanbreaker.Tripped as trip:
    print("tripped:", trip.detector, "after", calls.tools, "tool calls")
"""


def test_crewai_is_instrumented_when_the_application_imports_it() -> None:
    """``instrument()`` does not import CrewAI (seconds) for an application that has it installed; the
    application's own import instruments it."""
    repo = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", DEFERRED], capture_output=True, text=True, timeout=120, cwd=repo)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "imported before use: False" in result.stdout
    assert "tripped: tool_repeat after 4 tool calls" in result.stdout


def test_trips_kept_for_an_emit_are_bounded_and_never_raised_for_another_event() -> None:
    """A trip kept for an event whose ``emit`` never collects it (emitted on a bus thread, or past the wait) is
    dropped beyond a bound, and is only ever raised for that very event object."""
    from spanbreaker.adapters import crewai as adapter

    def handler(source: object, event: object) -> None:
        raise spanbreaker.Tripped("tool_repeat", "looped", "0" * 32)

    def call_safely(handler: object, source: object, event: object) -> None:
        handler(source, event)  # type: ignore[operator]

    events = [object() for _ in range(adapter._STOPPED_KEPT + 44)]
    try:
        for event in events:
            assert adapter._call_handler(call_safely, None, (handler, None, event), {}) is None
        assert len(adapter._stopped) == adapter._STOPPED_KEPT
        assert id(events[0]) not in adapter._stopped or adapter._stopped[id(events[0])][0] is not events[0]

        class Done:
            def result(self, timeout: float) -> None:
                return None

        class ToolUsageStartedEvent:  # a gated event type, by name
            pass

        stranger = ToolUsageStartedEvent()
        adapter._stopped[id(stranger)] = (object(), spanbreaker.Tripped("x", "y", "0" * 32))  # a reused id
        assert isinstance(adapter._emit(lambda *a: Done(), None, (None, stranger), {}), Done)
        last = events[-1]
        with adapter._stopped_lock:
            adapter._stopped[id(stranger)] = (stranger, adapter._stopped[id(last)][1])
        with pytest.raises(spanbreaker.Tripped):
            adapter._emit(lambda *a: Done(), None, (None, stranger), {})
    finally:
        adapter._stopped.clear()
