"""A tripped smolagents run survives the wire: OTLP over HTTP and gRPC to a real receiver on 127.0.0.1.

Why: Jaeger, Tempo, Phoenix and the Collector's tail-sampling policy only ever see what the OTLP exporter
sends. Every span must arrive exactly once (the breaker ends aborted spans itself; a double end or a leaked,
never-ended span would show here), and the trip attributes and events must be on the spans that tripped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import spanbreaker
from spanbreaker import marking

from ..otlp_receiver import Receiver
from .agent import TASK, build_agent

Exporters = dict[str, Callable[[Receiver], Any]]
EXPORTERS: Exporters = {
    "http": lambda r: HttpExporter(endpoint=r.http_traces_url),
    "grpc": lambda r: GrpcExporter(endpoint=r.grpc_endpoint, insecure=True),
}


@pytest.fixture(params=sorted(EXPORTERS))
def exported(request: Any, otlp_receiver: Receiver) -> Iterator[tuple[TracerProvider, InMemorySpanExporter, Receiver]]:
    """A provider exporting by batch to the receiver (the transport under test) and, for reference, in memory."""
    provider = TracerProvider(resource=Resource.create({"service.name": "roundtrip-test"}))
    local = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(local))
    provider.add_span_processor(BatchSpanProcessor(EXPORTERS[request.param](otlp_receiver)))
    spanbreaker.instrument(tracer_provider=provider, config=spanbreaker.BreakerConfig(), frameworks=["smolagents"])
    try:
        yield provider, local, otlp_receiver
    finally:
        spanbreaker.instrumentation.uninstrument()
        provider.shutdown()


def _arrived(provider: TracerProvider, local: InMemorySpanExporter, receiver: Receiver) -> list[Any]:
    assert provider.force_flush(10_000)
    expected = len(local.get_finished_spans())
    return receiver.store.wait_for(lambda spans: len(spans) >= expected)


def test_tripped_run_arrives_whole_with_the_trip_marks(exported: Any) -> None:
    provider, local, receiver = exported
    agent, tool, _ = build_agent()
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent.run(TASK)
    assert caught.value.detector == "tool_repeat"
    assert tool.calls == 4
    received = _arrived(provider, local, receiver)

    sent = {f"{s.context.span_id:016x}": s for s in local.get_finished_spans()}
    ids = [s.span_id for s in received]
    assert len(ids) == len(set(ids)), "a span arrived twice"
    assert set(ids) == set(sent), "spans went missing on the wire"
    assert {s.trace_id for s in received} == {caught.value.trace_id}

    by_id = {s.span_id: s for s in received}
    root = [s for s in received if s.parent_span_id is None]
    assert [s.name for s in root] == ["ToolCallingAgent.run"]
    for span in received:
        assert span.parent_span_id is None or span.parent_span_id in by_id, f"{span.name} lost its parent"
        assert span.resource["service.name"] == "roundtrip-test"

    tripped = [s for s in received if s.attributes.get(marking.TRIPPED) is True]
    assert root[0] in tripped, "the agent span carries the trip (tail sampling keys on it)"
    for span in tripped:
        assert span.attributes[marking.DETECTOR] == "tool_repeat"
        assert span.attributes[marking.REASON]
        assert span.attributes[marking.MODE] == "enforce"
        assert span.status_code == StatusCode.ERROR.value
        sent_attributes = dict(sent[span.span_id].attributes or {})
        assert {k: v for k, v in span.attributes.items() if k.startswith("spanbreaker.")} == {
            k: v for k, v in sent_attributes.items() if k.startswith("spanbreaker.")}
    blocked = [s for s in received if s.attributes.get(marking.BLOCKED) is True]
    assert len(blocked) == 1 and blocked[0].attributes["tool.name"] == "search"
    trip_events = [attrs for s in received for name, attrs in s.events if name == marking.TRIP_EVENT]
    assert trip_events and all(e[marking.DETECTOR] == "tool_repeat" for e in trip_events)
    assert any(k.startswith(marking.EVIDENCE_PREFIX) for e in trip_events for k in e)


def test_healthy_run_arrives_whole_without_trip_marks(exported: Any) -> None:
    provider, local, receiver = exported
    agent, _, _ = build_agent(healthy=True)
    assert agent.run(TASK) == "412 million"
    received = _arrived(provider, local, receiver)
    assert len({s.span_id for s in received}) == len(received) == len(local.get_finished_spans())
    assert not [s for s in received if any(k.startswith("spanbreaker.") for k in s.attributes)]
    assert not [n for s in received for n, _ in s.events if n == marking.TRIP_EVENT]
