"""What the examples print after a trip: the exception's figures, and the spans carrying it, as a trace viewer
would show them."""

from __future__ import annotations

from typing import Any

import spanbreaker


def print_trip_marks(exporter: Any, kind_key: str = "openinference.span.kind") -> None:
    """``kind_key``: the attribute naming a span's kind (OpenInference's, or ``gen_ai.operation.name``)."""
    marked = [span for span in exporter.get_finished_spans() if (span.attributes or {}).get("spanbreaker.tripped")]
    print("\nSpans carrying the trip (what Jaeger / Phoenix would show):")
    for span in marked:
        attributes = span.attributes or {}
        blocked = " (blocked: never ran)" if attributes.get("spanbreaker.blocked") else ""
        kind = attributes.get(kind_key)  # None on a span that carries nothing (a blocked ADK span: known by name)
        print(f"  {f'{kind} ' if kind else ''}{span.name}{blocked}")


def print_trip(trip: spanbreaker.Tripped, exporter: Any, calls: str, kind_key: str = "openinference.span.kind") -> None:
    """``calls``: one line on the calls made versus what the framework's own limit allows."""
    print(f"\nspanbreaker tripped: [{trip.detector}] {trip.reason}")
    print(f"  {calls}")
    print(f"  evidence: {trip.evidence}")
    print_trip_marks(exporter, kind_key)
