"""OTel metrics the breaker records about itself: trips, steers, blocked calls, warnings, internal errors.

Why metrics as well as span attributes: traces are sampled and short-lived, while an operator wants "how many
agents tripped in the last hour, by detector" on a dashboard and an alert on it. Counters go through the OTel
metrics API, so they follow whatever MeterProvider the application set up (OTLP, Prometheus, ...) and cost
nothing when there is none (the API's no-op meter).

Labels are low-cardinality on purpose: detector ids, agent names and span kinds, never trace ids or tool
arguments.
"""

from __future__ import annotations

import contextlib
from typing import Any

from opentelemetry import metrics

from . import marking

METER_NAME = "spanbreaker"
"""Instrumentation scope of the counters (what a metrics backend shows as the meter)."""

DETECTOR_LABEL = "spanbreaker.detector"
AGENT_LABEL = "spanbreaker.agent"
KIND_LABEL = "spanbreaker.span_kind"


class BreakerMetrics:
    """Five counters, created once per processor.

    Args:
        meter_provider: an SDK ``MeterProvider``; the global one when omitted (a no-op without an SDK).

    Every method is O(1), thread-safe (the SDK's counters are) and never raises: a failure to record a metric
    must not turn into an exception inside ``on_start``.
    """

    def __init__(self, meter_provider: Any = None) -> None:
        from . import __version__

        if meter_provider is not None:
            meter = meter_provider.get_meter(METER_NAME, __version__)
        else:
            meter = metrics.get_meter(METER_NAME, __version__)
        self._trips = meter.create_counter(
            marking.METRIC_TRIPS, unit="{trip}", description="Traces whose breaker tripped, by detector and agent."
        )
        self._blocked = meter.create_counter(
            marking.METRIC_BLOCKED, unit="{call}",
            description="Tool, model or agent calls vetoed by an open breaker before they ran.",
        )
        self._steers = meter.create_counter(
            marking.METRIC_STEERS, unit="{steer}",
            description="Calls failed with a steer message (response=steer) instead of a trip, by detector and agent.",
        )
        self._warnings = meter.create_counter(
            marking.METRIC_WARNINGS, unit="{warning}", description="Detectors that came close to their threshold."
        )
        self._internal_errors = meter.create_counter(
            marking.METRIC_INTERNAL_ERRORS, unit="{error}",
            description="Errors inside spanbreaker that were swallowed to keep the application running.",
        )

    def trip(self, detector: str, agent: str | None) -> None:
        """One trace tripped; ``agent`` is the innermost agent at the trip (``unknown`` when none)."""
        self._add(self._trips, {DETECTOR_LABEL: detector, AGENT_LABEL: agent or "unknown"})

    def steer(self, detector: str, agent: str | None) -> None:
        """One agent was steered (its call failed with a message for the model); a later trip counts apart."""
        self._add(self._steers, {DETECTOR_LABEL: detector, AGENT_LABEL: agent or "unknown"})

    def blocked(self, detector: str, kind: str) -> None:
        """One call was vetoed; ``kind`` is the span kind (``TOOL``, ``LLM``, ``AGENT``)."""
        self._add(self._blocked, {DETECTOR_LABEL: detector, KIND_LABEL: kind})

    def warning(self, detector: str) -> None:
        self._add(self._warnings, {DETECTOR_LABEL: detector})

    def internal_error(self) -> None:
        self._add(self._internal_errors, {})

    @staticmethod
    def _add(counter: Any, attributes: dict[str, str]) -> None:
        # The SDK does not raise here; suppressing is belt and braces, since this runs inside on_start.
        with contextlib.suppress(Exception):
            counter.add(1, attributes)
