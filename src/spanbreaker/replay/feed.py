"""Re-create recorded spans through a real SDK TracerProvider with a BreakerSpanProcessor in observe mode.

Why real SDK spans rather than feeding the processor look-alike objects: the processor is then exercised exactly
as in production (``BoundedAttributes``, span limits, parent contexts, ``ReadableSpan`` on end), so a replay
verdict is the verdict the live breaker would have reached on the same spans.

Recorded ids are kept: a custom :class:`IdGenerator` hands out the recorded trace and span id of the span being
started, and each span's parent is the recorded parent's context. Starts and ends are fed in recorded time
order; at equal timestamps the depth-first walk of the span tree decides (a tool starts after the model call
before it ended, parents wrap their children). The processor's clock is the recorded time, so time-based
behaviour (TTL, HALF_OPEN) follows the recording, not the replay's speed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import (
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    set_span_in_context,
)

from ..config import BreakerConfig
from ..errors import Tripped
from ..processor import BreakerSpanProcessor
from .readers import RecordedSpan, RecordedTrace

REPLAY_SCOPE = "spanbreaker.replay"
END_ATTRIBUTE_PREFIXES = ("output.", "llm.output_messages", "llm.token_count.", "llm.cost.", "gen_ai.usage.",
                          "gen_ai.response.", "gen_ai.output.")
"""Attributes an instrumentor sets when the call returns; replay sets them just before the span ends."""

_KINDS = {0: SpanKind.INTERNAL, 1: SpanKind.INTERNAL, 2: SpanKind.SERVER, 3: SpanKind.CLIENT,
          4: SpanKind.PRODUCER, 5: SpanKind.CONSUMER}
_STATUS = {1: StatusCode.OK, 2: StatusCode.ERROR}
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)


class RecordedIds(IdGenerator):
    """Hands out the ids of the span about to be started."""

    def __init__(self) -> None:
        self.trace_id = 1
        self.span_id = 1

    def generate_span_id(self) -> int:
        return self.span_id

    def generate_trace_id(self) -> int:
        return self.trace_id


class RecordedClock:
    """The processor's clock: seconds of the recorded event being fed."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class FeedStats:
    spans: int = 0
    """Spans started (= ended) through the SDK."""
    traces: int = 0
    internal_errors: int = 0


@dataclass
class Feeder:
    """One TracerProvider + processor, reused for every trace (as in a long-lived service)."""

    config: BreakerConfig
    extra_processors: Iterable[Any] = ()
    breaker: bool = True
    """False replays through the bare SDK (the throughput benchmark's baseline); verdicts are then empty."""
    processor: BreakerSpanProcessor = field(init=False)
    provider: TracerProvider = field(init=False)
    stats: FeedStats = field(default_factory=FeedStats)

    def __post_init__(self) -> None:
        self.ids = RecordedIds()
        self.clock = RecordedClock()
        self.processor = BreakerSpanProcessor(self.config.replace(mode="observe"), clock=self.clock)
        limits = SpanLimits(max_span_attributes=100_000, max_events=100_000, max_event_attributes=10_000,
                            max_attribute_length=None, max_span_attribute_length=None)
        self.provider = TracerProvider(id_generator=self.ids, sampler=ALWAYS_ON, span_limits=limits)
        if self.breaker:
            self.provider.add_span_processor(self.processor)
        for extra in self.extra_processors:
            self.provider.add_span_processor(extra)
        self._tracers: dict[str, Any] = {}
        """One tracer per recorded instrumentation scope (adapters' Tripped variants are chosen by scope)."""

    def shutdown(self) -> None:
        self.provider.shutdown()

    def feed(self, trace: RecordedTrace) -> None:
        """Start and end every span of the trace in recorded order; spans the recording never ended stay open."""
        live: dict[int, Any] = {}
        ended: set[int] = set()
        waiting: dict[int, RecordedSpan] = {}
        for at, is_start, span in schedule(trace.spans):
            self.clock.now = at / 1e9
            if is_start:
                live[span.span_id] = self._start(span)
                self.stats.spans += 1
                if span.span_id in waiting:
                    self._end(live, waiting.pop(span.span_id), ended)
            elif span.span_id in live:
                self._end(live, span, ended)
            else:
                waiting[span.span_id] = span
        self.stats.traces += 1

    def close_trace(self, trace_id: int) -> None:
        """End what the recording left open, so the processor forgets the trace (after its verdict was read)."""
        with contextlib.suppress(Tripped):
            self.processor.end_open_spans(trace_id)

    def _start(self, span: RecordedSpan) -> Any:
        start_attributes = {k: v for k, v in span.attributes.items() if not k.startswith(END_ATTRIBUTE_PREFIXES)}
        if span.parent_id is not None:
            parent = SpanContext(span.trace_id, span.parent_id, is_remote=False, trace_flags=_SAMPLED)
            context = set_span_in_context(NonRecordingSpan(parent))
        else:
            context = Context()
        self.ids.trace_id, self.ids.span_id = span.trace_id, span.span_id
        tracer = self._tracers.get(span.scope)
        if tracer is None:
            tracer = self._tracers[span.scope] = self.provider.get_tracer(span.scope or REPLAY_SCOPE)
        try:
            return tracer.start_span(span.name, context=context, kind=_KINDS.get(span.kind, SpanKind.INTERNAL),
                                     attributes=start_attributes, start_time=span.start_unix_nano,
                                     record_exception=False, set_status_on_exception=False)
        except Tripped:  # observe mode never raises; a registered variant would be a bug, not a stop
            self.stats.internal_errors += 1
            return None

    def _end(self, live: dict[int, Any], span: RecordedSpan, ended: set[int]) -> None:
        sdk_span = live.pop(span.span_id, None)
        if sdk_span is None or span.span_id in ended:
            return
        ended.add(span.span_id)
        end_attributes = {k: v for k, v in span.attributes.items() if k.startswith(END_ATTRIBUTE_PREFIXES)}
        if end_attributes:
            sdk_span.set_attributes(end_attributes)
        for event in span.events:
            sdk_span.add_event(event.name, event.attributes, timestamp=event.time_unix_nano)
        code = _STATUS.get(span.status_code)
        if code is not None:
            sdk_span.set_status(Status(code, span.status_message or None if code is StatusCode.ERROR else None))
        with contextlib.suppress(Tripped):
            sdk_span.end(end_time=span.end_unix_nano)


def schedule(spans: list[RecordedSpan]) -> list[tuple[int, bool, RecordedSpan]]:
    """(time, is_start, span) in the order to feed: by recorded time, and at equal times in depth-first order.

    The depth-first walk (children by start time, then recorded position) is the tie-breaker: at one timestamp
    a sibling ends before the next one starts, a parent starts before and ends after its children, and a
    zero-length span starts before it ends. A recording without clocks replays as a plain depth-first walk.
    """
    by_id = {s.span_id: s for s in spans}
    children: dict[int, list[int]] = {}
    roots: list[int] = []
    for index, span in enumerate(spans):
        if span.parent_id is not None and span.parent_id in by_id and span.parent_id != span.span_id:
            children.setdefault(span.parent_id, []).append(index)
        else:
            roots.append(index)
    order_key = lambda i: (spans[i].start_unix_nano, i)  # noqa: E731
    seq: dict[tuple[int, bool], int] = {}
    visited: set[int] = set()
    counter = 0
    pending = sorted(roots, key=order_key) + sorted(range(len(spans)), key=order_key)  # the rest: cycles
    for root in pending:
        if root in visited:
            continue
        stack: list[tuple[int, bool]] = [(root, True)]
        while stack:
            index, entering = stack.pop()
            if entering:
                if index in visited:
                    continue
                visited.add(index)
                seq[(index, True)] = counter
                counter += 1
                stack.append((index, False))
                kids = sorted(children.get(spans[index].span_id, ()), key=order_key)
                stack.extend((kid, True) for kid in reversed(kids) if kid not in visited)
            else:
                seq[(index, False)] = counter
                counter += 1
    keyed = []
    for index, span in enumerate(spans):
        keyed.append(((span.start_unix_nano, seq[(index, True)]), True, span))
        keyed.append(((max(span.end_unix_nano, span.start_unix_nano), seq[(index, False)]), False, span))
    keyed.sort(key=lambda item: item[0])
    return [(key[0], is_start, span) for key, is_start, span in keyed]
