"""Attaching to a tracing set-up that already exists: an instrumentor someone else started, repeated calls."""

from __future__ import annotations

import pytest
from openinference.instrumentation.smolagents import SmolagentsInstrumentor
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from smolagents import CodeAgent
from smolagents.monitoring import LogLevel

import spanbreaker
from spanbreaker.instrumentation import uninstrument

from .conftest import Rig
from .scripted import ScriptedModel, code


def looping_agent() -> CodeAgent:
    model = ScriptedModel([code(f'print({{"a": 1}}["{k}"])') for k in "bcdefghijk"])
    return CodeAgent(tools=[], model=model, max_steps=20, verbosity_level=LogLevel.OFF)


def test_an_instrumentor_started_by_someone_else_is_reused_and_repaired() -> None:
    uninstrument()  # whatever an earlier suite left instrumented
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    theirs = SmolagentsInstrumentor()
    theirs.instrument(tracer_provider=provider)  # e.g. Phoenix's register(auto_instrument=True)
    try:
        processor = spanbreaker.instrument(tracer_provider=provider, frameworks=["smolagents"])
        assert processor is not None
        with pytest.raises(spanbreaker.Tripped) as caught:
            looping_agent().run("Sum")
        assert caught.value.detector == "error_loop"
        assert trace.get_current_span() is trace.INVALID_SPAN
        spans = exporter.get_finished_spans()
        assert processor.stats.spans_started == len(spans)
        (run,) = [s for s in spans if s.name.endswith(".run")]
        assert run.status.status_code is StatusCode.ERROR
        assert (run.attributes or {}).get("spanbreaker.detector") == "error_loop"
    finally:
        uninstrument()
        theirs.uninstrument()
    assert theirs.is_instrumented_by_opentelemetry is False


def test_instrument_is_idempotent(rig: Rig) -> None:
    again = spanbreaker.instrument(tracer_provider=rig.provider, frameworks=["smolagents"])
    assert again is rig.processor
    with pytest.raises(spanbreaker.Tripped):
        looping_agent().run("Sum")
    assert len(rig.named(".run")) == 1
    assert len([s for s in rig.spans() if s.name == "Step 1"]) == 1
    rig.assert_nothing_lost()
