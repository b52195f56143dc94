"""What a trip writes on spans: every attribute and event name in one place.

Backends (Jaeger, Tempo, Phoenix), the Collector's tail-sampling policy and the Grafana dashboard query these
names, so they are part of the public contract. Only figures, ids and fingerprints are written here, never raw
tool arguments or model text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry.trace import Span, Status, StatusCode

TRIPPED = "spanbreaker.tripped"
"""bool: this span, or a span under it, tripped the breaker."""
DETECTOR = "spanbreaker.detector"
"""str: the detector id (``tool_repeat``, ``token_budget``, ...)."""
REASON = "spanbreaker.reason"
"""str: one sentence saying why."""
BLOCKED = "spanbreaker.blocked"
"""bool: the call this span stands for was vetoed and never ran; the processor ended the span itself."""
STEERED = "spanbreaker.steered"
"""bool: a loop detector's first finding on this tool call under ``response="steer"``. With ``blocked`` the call
was failed with :class:`~spanbreaker.Steered` (its message went to the model) and never ran."""
STATE = "spanbreaker.state"
"""str: breaker state when the span was marked (``open``, ``half_open``)."""
MODE = "spanbreaker.mode"
"""str: ``enforce`` or ``observe``."""
TRIP_EVENT = "spanbreaker.trip"
"""Event on the span where the trip was detected and on its open ancestors; attributes ``evidence.*``."""
STEER_EVENT = "spanbreaker.steer"
"""Event on a steered span; attributes ``evidence.*``."""
WARNING_EVENT = "spanbreaker.warning"
"""Event: a detector is close to its threshold (graduated response before a trip)."""
EVIDENCE_PREFIX = "spanbreaker.evidence."

# Metric instrument names (recorded through the OTel metrics API; a no-op without a MeterProvider).
METRIC_TRIPS = "spanbreaker.trips"
METRIC_BLOCKED = "spanbreaker.blocked_calls"
METRIC_WARNINGS = "spanbreaker.warnings"
METRIC_STEERS = "spanbreaker.steers"
METRIC_INTERNAL_ERRORS = "spanbreaker.internal_errors"

_PRIMITIVES = (bool, int, float, str)


def flatten_evidence(evidence: Mapping[str, Any], prefix: str = EVIDENCE_PREFIX) -> dict[str, Any]:
    """Evidence as valid OTel attribute values: primitives kept, sequences of primitives as tuples."""
    flat: dict[str, Any] = {}
    for key, value in evidence.items():
        if isinstance(value, _PRIMITIVES):
            flat[prefix + key] = value
        elif isinstance(value, (list, tuple)) and all(isinstance(v, _PRIMITIVES) for v in value):
            flat[prefix + key] = tuple(str(v) for v in value[:32]) if value else ()
        elif value is not None:
            flat[prefix + key] = str(value)[:256]
    return flat


def trip_attributes(detector: str, reason: str, mode: str) -> dict[str, Any]:
    return {TRIPPED: True, DETECTOR: detector, REASON: reason, MODE: mode}


def mark_tripped(
    span: Span, detector: str, reason: str, evidence: Mapping[str, Any], mode: str, *, blocked: bool = False
) -> None:
    """Write the trip on a span that is still recording. Safe to call on an ended span (no-op)."""
    if not span.is_recording():
        return
    attributes = trip_attributes(detector, reason, mode)
    if blocked:
        attributes[BLOCKED] = True
    span.set_attributes(attributes)
    event_attributes: dict[str, Any] = {DETECTOR: detector, REASON: reason}
    if blocked:
        event_attributes[BLOCKED] = True
    event_attributes.update(flatten_evidence(evidence))
    span.add_event(TRIP_EVENT, event_attributes)
    span.set_status(Status(StatusCode.ERROR, f"spanbreaker: {detector}: {reason}"))


def mark_steered(
    span: Span, detector: str, reason: str, evidence: Mapping[str, Any], mode: str, *, blocked: bool = False
) -> None:
    """Write a steer on a span that is still recording (no-op on an ended span). The trace is not tripped."""
    if not span.is_recording():
        return
    attributes: dict[str, Any] = {STEERED: True, DETECTOR: detector, REASON: reason, MODE: mode}
    if blocked:
        attributes[BLOCKED] = True
    span.set_attributes(attributes)
    event_attributes: dict[str, Any] = {DETECTOR: detector, REASON: reason}
    event_attributes.update(flatten_evidence(evidence))
    span.add_event(STEER_EVENT, event_attributes)
    if blocked:
        span.set_status(Status(StatusCode.ERROR, f"spanbreaker: steered: {detector}: {reason}"))


def mark_warning(span: Span, detector: str, reason: str, evidence: Mapping[str, Any]) -> None:
    """Record a ``spanbreaker.warning`` event: the detector is near its threshold."""
    if not span.is_recording():
        return
    attributes: dict[str, Any] = {DETECTOR: detector, REASON: reason}
    attributes.update(flatten_evidence(evidence))
    span.add_event(WARNING_EVENT, attributes)
