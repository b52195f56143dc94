"""Processors added after the breaker see a blocked span start before it ends, and export it (issue 16 item 5).

``spanbreaker.instrument(provider)`` first and the app's processors after it is what Phoenix's ``register`` and
Agno's ``setup_tracing`` do when called later. The ``Tripped`` raised in the breaker's ``on_start`` stops the
SDK's loop over its processors; the breaker gives the later ones their ``on_start`` before it ends the span.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

from ..otlp_receiver import Receiver, otlp_receiver

__all__ = ["otlp_receiver"]


class StartedOnly(SpanProcessor):
    """Forwards to its exporter only spans it saw start, like a processor keyed on ``on_start`` (a tail sampler,
    a span buffer per trace). A span that ends unseen is refused and counted."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        self.exporter = exporter
        self.started: dict[int, int] = {}
        self.refused: list[str] = []
        self._lock = threading.Lock()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        with self._lock:
            key = span.context.span_id
            self.started[key] = self.started.get(key, 0) + 1

    def on_end(self, span: ReadableSpan) -> None:
        with self._lock:
            seen = span.context is not None and span.context.span_id in self.started
        if not seen:
            self.refused.append(span.name)
            return
        self.exporter.export([span])


def _loop(provider: TracerProvider) -> None:
    """An agent calling the same tool with the same arguments and result until the breaker blocks a call."""
    tracer = provider.get_tracer("openinference.instrumentation.smolagents")
    arguments = json.dumps({"args": [], "sanitize_inputs_outputs": True, "kwargs": {"query": "same"}})
    with tracer.start_as_current_span("CodeAgent.run", attributes={"openinference.span.kind": "AGENT"}):
        for _ in range(20):
            with tracer.start_as_current_span("search", attributes={
                    "openinference.span.kind": "TOOL", "tool.name": "search", "input.value": arguments}) as span:
                span.set_attribute("output.value", "the same result")


def _blocked(spans: list[ReadableSpan]) -> list[ReadableSpan]:
    return [s for s in spans if (s.attributes or {}).get("spanbreaker.blocked")]


@pytest.mark.parametrize("response", ["stop", "steer"])
@pytest.mark.parametrize("breaker_first", [True, False], ids=["breaker-first", "breaker-last"])
def test_a_later_processor_sees_the_blocked_span_start_and_keeps_it(breaker_first: bool, response: str) -> None:
    """Stopped (``Tripped``) or steered (``Steered``, an ordinary exception): both raise from ``on_start``."""
    provider = TracerProvider()
    strict = StartedOnly(InMemorySpanExporter())
    plain = InMemorySpanExporter()
    breaker = spanbreaker.BreakerSpanProcessor(spanbreaker.BreakerConfig(response=response))
    processors: list[SpanProcessor] = [strict, SimpleSpanProcessor(plain)]
    for processor in ([breaker, *processors] if breaker_first else [*processors, breaker]):
        provider.add_span_processor(processor)
    with pytest.raises(spanbreaker.Steered if response == "steer" else spanbreaker.Tripped):
        _loop(provider)
    assert strict.refused == []
    assert set(strict.started.values()) == {1}  # every span started once for it, none twice
    assert len(_blocked(list(strict.exporter.get_finished_spans()))) == 1
    assert [s.name for s in strict.exporter.get_finished_spans()] == [s.name for s in plain.get_finished_spans()]
    provider.shutdown()


@pytest.fixture
def batch(otlp_receiver: Receiver) -> Iterator[tuple[TracerProvider, Receiver]]:
    """``spanbreaker.instrument`` first, then the app's batch exporter to a real OTLP receiver on loopback."""
    provider = TracerProvider()
    spanbreaker.instrument(tracer_provider=provider, config=spanbreaker.BreakerConfig(), frameworks=())
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=otlp_receiver.http_traces_url)))
    try:
        yield provider, otlp_receiver
    finally:
        provider.shutdown()


def test_the_blocked_span_reaches_a_batch_exporter_added_after_instrument(batch: Any) -> None:
    provider, receiver = batch
    processors = provider._active_span_processor._span_processors
    assert isinstance(processors[0], spanbreaker.BreakerSpanProcessor)  # the breaker really is first
    with pytest.raises(spanbreaker.Tripped):
        _loop(provider)
    assert provider.force_flush(10_000)
    received = receiver.store.wait_for(lambda spans: any(s.attributes.get("spanbreaker.blocked") for s in spans))
    blocked = [s for s in received if s.attributes.get("spanbreaker.blocked")]
    assert len(blocked) == 1 and blocked[0].name == "search"
    assert blocked[0].attributes.get("spanbreaker.tripped") is True
