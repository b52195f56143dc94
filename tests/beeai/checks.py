"""Assertions shared by the BeeAI tests: every span exported once, trip marks where a reader looks for them."""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan

import spanbreaker
from tests.exported import assert_exported_once

from .conftest import Traced

TRIPPED = "spanbreaker.tripped"
BLOCKED = "spanbreaker.blocked"
DETECTOR = "spanbreaker.detector"


def exported_once(traced: Traced) -> list[ReadableSpan]:
    """Every span the breaker saw start was ended and exported exactly once."""
    spans = traced.spans()
    assert_exported_once(spans, traced.breaker)
    return spans


def assert_trip_marked(traced: Traced, trip: spanbreaker.Tripped) -> None:
    """The blocked call, its agent span and the root carry the trip; the detection span is exported."""
    spans = exported_once(traced)
    of_trace = [s for s in spans if s.context is not None and f"{s.context.trace_id:032x}" == trip.trace_id]
    assert of_trace, "no span of the tripped trace was exported"
    blocked = [s for s in of_trace if (s.attributes or {}).get(BLOCKED) is True]
    assert blocked, "no blocked span"
    assert all((s.attributes or {}).get(DETECTOR) == trip.detector for s in blocked)
    roots = [s for s in of_trace if s.parent is None or s.parent.is_remote]
    assert len(roots) == 1
    assert (roots[0].attributes or {}).get(TRIPPED) is True
    agents = [s for s in of_trace if (s.attributes or {}).get("openinference.span.kind") == "AGENT"]
    assert agents and any((s.attributes or {}).get(TRIPPED) is True for s in agents)
    record = traced.breaker.trip_record(trip.trace_id)
    assert record is not None and record.detector == trip.detector
    assert any(f"{s.context.span_id:016x}" == record.span_id for s in of_trace if s.context is not None), \
        "the span where the trip was detected was not exported"
    assert any(event.name == "spanbreaker.trip" for s in of_trace for event in s.events)


def assert_quiet(traced: Traced) -> None:
    spans = exported_once(traced)
    assert traced.breaker.stats.trips == 0
    assert not [s.name for s in spans if (s.attributes or {}).get(TRIPPED)]
