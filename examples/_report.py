"""What the examples print after a trip: the spans carrying it, as a trace viewer would show them."""

from __future__ import annotations

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def print_trip_marks(exporter: InMemorySpanExporter) -> None:
    marked = [span for span in exporter.get_finished_spans() if (span.attributes or {}).get("spanbreaker.tripped")]
    print("\nSpans carrying the trip (what Jaeger / Phoenix would show):")
    for span in marked:
        attributes = span.attributes or {}
        blocked = " (blocked: never ran)" if attributes.get("spanbreaker.blocked") else ""
        print(f"  {attributes.get('openinference.span.kind')} {span.name}{blocked}")
