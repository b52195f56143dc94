"""The per-trace circuit breaker: CLOSED -> OPEN -> HALF_OPEN, the trip record, and listeners.

The state pattern from pybreaker, without its two habits we avoid: no lock is held around the user's call
(the processor only holds a trace's lock while it updates state), and no wall clock inside the machine (the
processor passes ``now`` from an injected monotonic clock).

* CLOSED: every call goes ahead; detectors watch.
* OPEN: latched. Every TOOL / LLM / AGENT span start in the trace is blocked, so a framework that swallowed
  one trip (Agno member runs, smolagents tools) meets another at its next call.
* HALF_OPEN: after ``half_open_after_s`` one probe call goes through; if it ends cleanly the breaker closes,
  otherwise it opens again.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Protocol


class BreakerState(str, enum.Enum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class Admission(enum.Enum):
    ALLOW = 0
    BLOCK = 1
    PROBE = 2


@dataclass
class TripRecord:
    """What tripped, where, and why. Figures and ids only: no tool arguments, no model text."""

    detector: str
    reason: str
    trace_id: str
    span_id: str | None = None
    span_name: str | None = None
    step: str | None = None
    agent: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    time_unix_nano: int = 0
    model_calls_after: int = 0
    """Model calls that started in the trace after the trip (blocked ones included)."""
    tool_calls_after: int = 0
    blocked_calls: int = 0
    remote: bool = field(default=False, compare=False, repr=False)
    """Decided in another process and heard through shared state (not re-published; not in :meth:`as_dict`)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "detector": self.detector, "reason": self.reason, "trace_id": self.trace_id,
            "span_id": self.span_id, "span_name": self.span_name, "step": self.step, "agent": self.agent,
            "evidence": dict(self.evidence), "time_unix_nano": self.time_unix_nano,
            "model_calls_after": self.model_calls_after, "tool_calls_after": self.tool_calls_after,
            "blocked_calls": self.blocked_calls,
        }


class BreakerListener(Protocol):
    """Callbacks (pybreaker style). Called after the state changed, outside the breaker's locks.

    Exceptions raised by a listener are logged and ignored: a listener can never break the host application.
    """

    def on_trip(self, record: TripRecord) -> None: ...

    def on_state_change(self, trace_id: str, old: BreakerState, new: BreakerState) -> None: ...


class TraceBreaker:
    """One trace's state machine. Not thread-safe by itself: the processor holds the trace lock."""

    __slots__ = ("first", "opened_at", "probe_span_id", "record", "state")

    def __init__(self) -> None:
        self.state = BreakerState.CLOSED
        self.record: TripRecord | None = None
        """The trip the breaker is open for (the latest, once a probe closed it and it tripped again)."""
        self.first: TripRecord | None = None
        """The trace's first trip, kept through recoveries: where an enforced run would have stopped (an observed
        run goes on, and after ``half_open_after_s`` of its clock a probe can close the breaker for a later trip)."""
        self.opened_at = 0.0
        self.probe_span_id: int | None = None

    def admit(self, now: float, half_open_after: float, span_id: int) -> Admission:
        """May a call start? Moves OPEN -> HALF_OPEN when the timeout has passed."""
        if self.state is BreakerState.CLOSED:
            return Admission.ALLOW
        if self.state is BreakerState.OPEN:
            if half_open_after > 0 and now - self.opened_at >= half_open_after:
                self.state = BreakerState.HALF_OPEN
                self.probe_span_id = span_id
                return Admission.PROBE
            return Admission.BLOCK
        return Admission.BLOCK  # HALF_OPEN with a probe in flight

    def trip(self, record: TripRecord, now: float) -> BreakerState:
        """Open the breaker; returns the previous state. A later trip keeps the first record."""
        old = self.state
        if self.record is None or old is BreakerState.CLOSED:
            self.record = record
        if self.first is None:
            self.first = record
        self.state = BreakerState.OPEN
        self.opened_at = now
        self.probe_span_id = None
        return old

    def probe_ended(self, ok: bool, now: float) -> BreakerState:
        """The HALF_OPEN probe finished: close on success, re-open on failure. Returns the new state."""
        self.probe_span_id = None
        if ok:
            self.state = BreakerState.CLOSED
        else:
            self.state = BreakerState.OPEN
            self.opened_at = now
        return self.state

    def reset(self) -> BreakerState:
        old = self.state
        self.state = BreakerState.CLOSED
        self.record = self.first = None
        self.probe_span_id = None
        return old
