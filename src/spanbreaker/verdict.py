"""What the engine decided about one span, as data: the response, the trip record, the spans to mark.

The engine decides under the trace's lock and returns a :class:`Verdict`; whoever fed it the span acts on it
outside the lock. The SDK façade (:class:`~spanbreaker.BreakerSpanProcessor`) marks the spans, tells the
listeners, ends a blocked span and raises; a replay reads the record. Nothing here knows the SDK: the spans to
mark are the ids the engine was fed and the ``handle`` objects passed with them (the façade's SDK spans).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from .breaker import BreakerState, TripRecord
from .kinds import Kind


class Action(IntEnum):
    """The response, weakest first (a verdict carries the strongest one reached on its span)."""

    WARN = 1
    """A detector is near its threshold: mark a ``spanbreaker.warning`` event; the call goes on."""
    STEER = 2
    """``response="steer"``: a loop detector's first finding on a tool call. The breaker stays CLOSED; in
    enforce mode ``block`` is the call, which the façade ends as steered and fails with
    :class:`~spanbreaker.Steered` (an ordinary exception the framework hands to the model); the detector's next
    finding in that agent trips."""
    TRIP = 3
    """A detector tripped (or a remote trip or kill switch latched): the breaker opened, spans are marked; the
    call the verdict is about already ran (an end hook) or observe mode lets it run."""
    BLOCK = 4
    """The breaker vetoes the call this span stands for (enforce mode, at span start): end the span as blocked
    and raise the trip. ``new_trip`` says whether this verdict opened the breaker or met it open."""


@dataclass(slots=True)
class Verdict:
    action: Action
    detector: str
    reason: str
    evidence: dict[str, Any]
    record: TripRecord | None = None
    """The trace's trip (TRIP and BLOCK), the steer (STEER; the breaker holds no record of it); None for WARN."""
    mark_ids: tuple[int, ...] = ()
    """Span ids to mark: for a trip the detection span if still open, then its open ancestors up to the root;
    for a warning the one span that carries the event."""
    marks: tuple[Any, ...] = ()
    """The handles fed with ``mark_ids`` (same order): what the façade writes the marks on."""
    block: Any = None
    """The handle of the span to end as blocked (BLOCK, and STEER in enforce mode; its call never runs)."""
    kind: Kind = Kind.OTHER
    """Kind of the span the verdict is about (metrics label the blocked calls by it)."""
    new_trip: bool = False
    """This verdict opened the breaker (listeners and metrics hear of it once)."""
    old_state: BreakerState = BreakerState.CLOSED
    new_state: BreakerState = BreakerState.CLOSED
    warnings: tuple[Verdict, ...] = ()
    """WARN verdicts reached on the same span before this one, applied first."""
