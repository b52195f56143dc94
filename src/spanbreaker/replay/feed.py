"""Feed recorded spans to a :class:`~spanbreaker.engine.BreakerEngine` in observe mode, without SDK span objects.

Why the engine directly rather than real SDK spans through a TracerProvider: the engine is the breaker (the SDK
façade only reads SDK fields and applies verdicts), and building and ending an SDK span per recorded span cost
a quarter of the replay's time. The feeder hands the engine exactly what the façade would: the recorded ids,
name and attributes at start (those an instrumentor sets when the call returns are held back to the end, see
:data:`END_ATTRIBUTE_PREFIXES`), the attributes, events and status at end. Marks the façade would write on
still-open spans (trip, warning, steer: :mod:`spanbreaker.marking`) are applied to a small :class:`Marks` record
per marked span, so a marked span's status at its end is what the SDK span's would be, and ``--export`` writes
the marks.

Starts and ends are fed in recorded time order; at equal timestamps the depth-first walk of the span tree
decides (a tool starts after the model call before it ended, parents wrap their children). The engine's clock
is the recorded time, so time-based behaviour (TTL, HALF_OPEN) follows the recording, not the replay's speed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.trace import Status, StatusCode

from .. import marking
from ..config import BreakerConfig
from ..engine import BreakerEngine
from ..verdict import Action, Verdict
from .recorded import END_ATTRIBUTE_PREFIXES, RecordedEvent, RecordedSpan, RecordedTrace, start_attributes

__all__ = ["END_ATTRIBUTE_PREFIXES", "FeedStats", "Feeder", "Marks", "RecordedClock", "schedule"]

_UNSET = Status(StatusCode.UNSET)
_OK = Status(StatusCode.OK)
_WARN, _STEER = Action.WARN, Action.STEER


class RecordedClock:
    """The engine's clock: seconds of the recorded event being fed."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass(slots=True)
class Marks:
    """What the breaker wrote on one span while it was open: the surface :mod:`spanbreaker.marking` writes
    through (``is_recording``, ``set_attributes``, ``add_event``, ``set_status`` with the SDK's rules)."""

    clock: RecordedClock
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[RecordedEvent] = field(default_factory=list)
    status: Status | None = None
    ended: bool = False

    def is_recording(self) -> bool:
        return not self.ended

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        self.attributes.update(attributes)

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None,
                  timestamp: int | None = None) -> None:
        at = timestamp if timestamp is not None else int(self.clock.now * 1e9)
        self.events.append(RecordedEvent(name, at, dict(attributes or {})))

    def set_status(self, status: Status) -> None:
        """The SDK's rule: OK is final, UNSET is ignored."""
        if (self.status is not None and self.status.status_code is StatusCode.OK) or (
                status.status_code is StatusCode.UNSET):
            return
        self.status = status


@dataclass
class FeedStats:
    spans: int = 0
    """Spans started (= ended) through the engine."""
    traces: int = 0


class Feeder:
    """One engine, reused for every trace (as one long-lived service's breaker).

    Args:
        config: thresholds (``mode`` is forced to ``observe``).
        keep_spans: keep every fed span with its marks until :meth:`take_spans` (``--export``).
    """

    def __init__(self, config: BreakerConfig, *, keep_spans: bool = False) -> None:
        self.config = config.replace(mode="observe")
        self.clock = RecordedClock()
        self.engine = BreakerEngine(self.config, clock=self.clock)
        self.stats = FeedStats()
        self.keep_spans = keep_spans
        self._kept: list[tuple[RecordedSpan, Marks | None]] = []
        self._marks: dict[int, Marks] = {}
        """Per span id of the trace being fed, the marks written on it (only marked spans have an entry)."""
        self._ended: set[int] = set()
        self.usage: dict[int, tuple[int, float]] = {}
        """Per span id of the trace being fed, each model call's (tokens, USD) as the engine counted them toward
        its budgets (not after a trip: the engine then stops reading the trace)."""
        usage = self.usage
        self.engine.on_model_usage = lambda span_id, tokens, cost: usage.__setitem__(span_id, (tokens, cost))

    def shutdown(self) -> None:
        self.engine.close()

    def keep(self, spans: list[tuple[RecordedSpan, Marks | None]]) -> None:
        """Spans with marks fed elsewhere (a ``--jobs`` worker), handed on by :meth:`take_spans`."""
        self._kept.extend(spans)

    def take_spans(self) -> list[tuple[RecordedSpan, Marks | None]]:
        """The spans fed since the last call, in the order they ended, each with its marks (``keep_spans``)."""
        kept, self._kept = self._kept, []
        return kept

    def feed(self, trace: RecordedTrace) -> None:
        """Start and end every span of the trace in recorded order; spans the recording never ended stay open."""
        self.usage.clear()
        live: dict[int, RecordedSpan] = {}
        ended = self._ended
        waiting: dict[int, RecordedSpan] = {}
        clock, start, end = self.clock, self.engine.start, self.engine.end
        marked = self._marks
        started = 0
        for at, is_start, span in schedule(trace.spans):
            clock.now = at / 1e9
            span_id = span.span_id
            if is_start:
                live[span_id] = span
                started += 1
                attributes = span.start_attributes
                if attributes is None:
                    attributes = start_attributes(span)
                verdict = start(span.trace_id, span_id, span.parent_id, False, span.name, attributes, span)
                if verdict is not None:
                    self._apply(verdict)
                if span_id in waiting:
                    self._end(live, waiting.pop(span_id), ended)
            elif live.get(span_id) is span and span_id not in ended and not marked and not self.keep_spans:
                # _end's common case inline (the span's own start, no marks, nothing kept): one call per span less
                del live[span_id]
                ended.add(span_id)
                code = span.status_code
                verdict = end(span.trace_id, span_id, span.attributes, span.events, _OK if code == 1 else Status(
                    StatusCode.ERROR, span.status_message or None) if code == 2 else _UNSET)
                if verdict is not None:
                    self._apply(verdict)
            elif span_id in live:
                self._end(live, span, ended)
            else:
                waiting[span_id] = span
        self.stats.spans += started
        self.stats.traces += 1

    def close_trace(self, trace_id: int) -> None:
        """End what the recording left open, youngest first, as the façade's ``end_open_spans`` does (with a
        trip, each carries its marks), so the engine forgets the trace; called after its verdict was read."""
        handles, record = self.engine.open_spans(trace_id)
        for span in reversed(handles):
            if not isinstance(span, RecordedSpan) or span.span_id in self._ended:
                continue
            marks = self._marks.get(span.span_id)
            attributes = start_attributes(span)
            if record is not None and not (attributes.get(marking.TRIPPED) or (
                    marks is not None and marks.attributes.get(marking.TRIPPED))):
                marks = self._marks_of(span)
                marking.mark_tripped(marks, record.detector, record.reason, {}, self.config.mode)  # type: ignore[arg-type]
            self._ended.add(span.span_id)
            if marks is not None:
                marks.ended = True
                attributes = {**attributes, **marks.attributes}
                events: list[RecordedEvent] = marks.events
                status = marks.status or _UNSET
            else:
                events, status = [], _UNSET
            if self.keep_spans:
                self._kept.append((span, marks))
            verdict = self.engine.end(span.trace_id, span.span_id, attributes, events, status)
            if verdict is not None:
                self._apply(verdict)
        self._marks.clear()
        self._ended.clear()
        self.usage.clear()

    def _end(self, live: dict[int, RecordedSpan], span: RecordedSpan, ended: set[int]) -> None:
        opened = live.pop(span.span_id, None)
        if opened is None or span.span_id in ended:
            return
        ended.add(span.span_id)
        attributes: Mapping[str, Any] = span.attributes
        if opened is not span:  # a second span under the same id: its start's attributes, this end's results
            attributes = {**start_attributes(opened), **_end_attributes(span)}
        events: list[RecordedEvent] = span.events
        code = span.status_code
        status = _OK if code == 1 else Status(StatusCode.ERROR, span.status_message or None) if code == 2 else _UNSET
        marks = self._marks.get(span.span_id) if self._marks else None
        if marks is not None:
            marks.ended = True
            attributes = {**attributes, **marks.attributes}
            events = marks.events + events
            if code == 0 and marks.status is not None:
                status = marks.status
        if self.keep_spans:
            self._kept.append((span, marks))
        verdict = self.engine.end(span.trace_id, span.span_id, attributes, events, status)
        if verdict is not None:
            self._apply(verdict)

    def _marks_of(self, span: RecordedSpan) -> Marks:
        marks = self._marks.get(span.span_id)
        if marks is None:
            marks = self._marks[span.span_id] = Marks(self.clock)
        return marks

    def _apply(self, verdict: Verdict) -> None:
        """What the façade's ``_apply`` does in observe mode (nothing is blocked): warnings, then the trip or
        steer marks, then metrics and listeners."""
        for warning in (*verdict.warnings, verdict) if verdict.warnings else (verdict,):
            if warning.action is _WARN:
                for span in warning.marks:
                    if isinstance(span, RecordedSpan):
                        marking.mark_warning(self._marks_of(span), warning.detector, warning.reason,  # type: ignore[arg-type]
                                             warning.evidence)
        record = verdict.record
        if record is not None:
            mark = marking.mark_steered if verdict.action is _STEER else marking.mark_tripped
            for span in verdict.marks:
                if isinstance(span, RecordedSpan):
                    mark(self._marks_of(span), record.detector, record.reason, record.evidence,  # type: ignore[arg-type]
                         self.config.mode)
        self.engine.announce(verdict)


def _end_attributes(span: RecordedSpan) -> dict[str, Any]:
    return {k: v for k, v in span.attributes.items() if k.startswith(END_ATTRIBUTE_PREFIXES)}


def schedule(spans: list[RecordedSpan]) -> list[tuple[int, bool, RecordedSpan]]:
    """(time, is_start, span) in the order to feed: by recorded time, and at equal times in depth-first order.

    The depth-first walk (children by start time, then recorded position) is the tie-breaker: at one timestamp
    a sibling ends before the next one starts, a parent starts before and ends after its children, and a
    zero-length span starts before it ends. A recording without clocks replays as a plain depth-first walk.

    Written for the interpreter (it runs once per trace over every span): the walk numbers each start and end,
    and the order is one sort of plain ints, ``time * 2n + number`` (the number is unique, so it breaks ties).
    """
    count = len(spans)
    ids = {s.span_id for s in spans}
    children: dict[int, list[int]] = {}
    roots: list[int] = []
    for index, span in enumerate(spans):
        parent = span.parent_id
        if parent is not None and parent in ids and parent != span.span_id:
            kids = children.get(parent)
            if kids is None:
                children[parent] = [index]
            else:
                kids.append(index)
        else:
            roots.append(index)
    starts = [s.start_unix_nano for s in spans]
    by_start = starts.__getitem__  # a stable sort of ascending indices: (start, index) order
    width = 2 * count
    events: list[Any] = [None] * width
    keys: list[int] = []
    visited = bytearray(count)
    number = 0
    for root in sorted(roots, key=by_start) + sorted(range(count), key=by_start):  # then the rest: cycles
        if visited[root]:
            continue
        stack = [root]  # an index enters the span, ~index leaves it
        while stack:
            item = stack.pop()
            if item >= 0:
                if visited[item]:
                    continue
                visited[item] = 1
                span = spans[item]
                at = starts[item]
                events[number] = (at, True, span)
                keys.append(at * width + number)
                number += 1
                stack.append(~item)
                kids = children.get(span.span_id)
                if kids:
                    stack.extend(kid for kid in reversed(sorted(kids, key=by_start)) if not visited[kid])
            else:
                span = spans[~item]
                at = max(span.end_unix_nano, starts[~item])
                events[number] = (at, False, span)
                keys.append(at * width + number)
                number += 1
    keys.sort()
    return [events[key % width] for key in keys]
