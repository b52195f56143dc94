"""BreakerSpanProcessor: span in -> signal -> detectors -> per-trace breaker -> trip.

Add it to any SDK ``TracerProvider`` (first or last: on_start marks are exported either way)::

    provider.add_span_processor(spanbreaker.BreakerSpanProcessor())

Contract (in the words of the SDK's ``SpanProcessor``): ``on_start`` and ``on_end`` are called synchronously on
the thread that starts or ends the span. They never raise anything but the intended trip: every other error
(odd attributes, a bug, a listener failing) is counted in :attr:`stats`, logged once, and swallowed. Work per
span is O(1) in the length of the run and bounded in attribute size.

Where the trip reaches the framework: ``on_start`` of a TOOL, LLM or AGENT span raises
:class:`~spanbreaker.Tripped` (or the variant registered for the span's instrumentation scope) when a detector
vetoes the call or the trace's breaker is OPEN. The vetoed span is ended here, marked
``spanbreaker.blocked``, so it is exported rather than lost. A trip found in ``on_end`` (a result, a token
count) opens the breaker; the next call in the trace is the one blocked.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk import trace as sdk_trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import SpanContext, Status, StatusCode

from . import marking
from .breaker import Admission, BreakerListener, BreakerState, TripRecord
from .config import BreakerConfig
from .detectors import Detector, Finding, build_detectors
from .detectors.base import Quiet
from .errors import Tripped, trip_exception_for
from .pricing import cost_usd, prewarm
from .signals import (
    KIND_BY_OPENINFERENCE,
    AgentRun,
    Kind,
    ModelCall,
    StepEnd,
    ToolCall,
    agent_start,
    classify,
    delegation_key,
    fill_agent_result,
    fill_model_result,
    fill_tool_result,
    model_start,
    raw_attributes,
    root_error,
    tool_start,
)
from .tracestate import MAX_OPEN_SPANS, OpenSpan, TraceState

logger = logging.getLogger("spanbreaker")

MAX_RECORDS = 4096
"""Trip records kept after their trace ended, so a caller can still look a trip up by trace id."""
MAX_SESSIONS = 10_000


@dataclass(slots=True)
class Stats:
    spans_started: int = 0
    spans_ended: int = 0
    trips: int = 0
    blocked: int = 0
    warnings: int = 0
    internal_errors: int = 0
    traces_evicted: int = 0
    state_errors: int = 0
    """Shared-state (Redis) operations that failed or timed out; detection went on with the local view."""


@dataclass(slots=True)
class _Hooks:
    """The detectors' methods for one hook, in detector order: those that run on every span, then the trailing
    ones that only run once a trace total reaches ``quiet`` (budgets: see :meth:`Detector.quiet_below`)."""

    always: list[Callable[..., Finding | None]]
    gated: list[Callable[..., Finding | None]]
    quiet: Quiet

    @classmethod
    def build(cls, detectors: list[Detector], hook: str) -> _Hooks:
        chosen = [d for d in detectors if type(d).overrides(hook)]
        quiet = Quiet()
        split = len(chosen)
        while split > 0:
            below = chosen[split - 1].quiet_below(hook)
            if below is None:
                break
            quiet = quiet.combine(below)
            split -= 1
        return cls([getattr(d, hook) for d in chosen[:split]], [getattr(d, hook) for d in chosen[split:]], quiet)


@dataclass(slots=True)
class _Trip:
    """A trip decided under the trace lock, acted on (marks, listeners, raise) outside it."""

    record: TripRecord
    targets: list[Any]
    """Spans to mark: the detection span if still open, then its open ancestors up to the root."""
    block: Any | None
    """The span to end as blocked (its call never runs); None when nothing is vetoed."""
    exception: type[Tripped]
    raise_it: bool
    new_trip: bool
    old_state: BreakerState
    new_state: BreakerState


_CLEAN_STEP = StepEnd(None)
_SDK_SPANS = frozenset({Span, getattr(sdk_trace, "_Span", Span)})
"""The SDK's span classes (the tracer makes ``_Span``), whose fields the hot path reads directly."""
_UNSET, _OK = StatusCode.UNSET, StatusCode.OK
# Enum members as module constants for the hot path: on Python 3.11 ``Kind.TOOL`` is a class attribute lookup
# through the enum's metaclass that costs as much as a function call.
_AGENT, _CHAIN, _LLM, _TOOL, _OTHER = Kind.AGENT, Kind.CHAIN, Kind.LLM, Kind.TOOL, Kind.OTHER
_CLOSED = BreakerState.CLOSED


def _hex_trace(trace_id: int) -> str:
    return f"{trace_id:032x}"


def _hex_span(span_id: int) -> str:
    return f"{span_id:016x}"


def _to_trace_int(trace_id: int | str) -> int:
    return int(trace_id, 16) if isinstance(trace_id, str) else int(trace_id)


class BreakerSpanProcessor(SpanProcessor):
    """Per-trace circuit breakers fed by agent, tool and LLM spans.

    Args:
        config: a :class:`BreakerConfig`. When omitted, it is loaded from ``SPANBREAKER_CONFIG`` (TOML) and
            ``SPANBREAKER_*`` environment variables. An explicit config is used as given.
        listeners: :class:`~spanbreaker.breaker.BreakerListener` objects.
        on_trip, on_state_change: plain callbacks, the same as a listener with one method.
        clock: a monotonic clock in seconds (tests inject one).
        meter_provider: where trip metrics go; the global one by default (a no-op without an SDK).
        **overrides: fields of :class:`BreakerConfig` that replace the config's values.
    """

    def __init__(
        self,
        config: BreakerConfig | None = None,
        *,
        listeners: Iterable[BreakerListener] = (),
        on_trip: Callable[[TripRecord], None] | None = None,
        on_state_change: Callable[[str, BreakerState, BreakerState], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        meter_provider: Any = None,
        **overrides: Any,
    ) -> None:
        base = config if config is not None else BreakerConfig.load()
        self.config = base.replace(**overrides) if overrides else base
        self.stats = Stats()
        self._clock = clock
        self._enforce = self.config.mode == "enforce"
        self._cap = self.config.max_attribute_chars
        self._traces: OrderedDict[int, TraceState] = OrderedDict()
        self._records: OrderedDict[int, TripRecord] = OrderedDict()
        self._sessions: OrderedDict[str, int] = OrderedDict()
        self._table_lock = threading.Lock()
        self._listeners: list[Any] = list(listeners)
        self._trip_callbacks: list[Callable[[TripRecord], None]] = [on_trip] if on_trip else []
        self._state_callbacks: list[Callable[[str, BreakerState, BreakerState], None]] = (
            [on_state_change] if on_state_change else [])
        self._detectors = build_detectors(self.config)
        hooks = {hook: _Hooks.build(self._detectors, hook) for hook in Detector.HOOKS}
        # One attribute per hook: the hot path reads an attribute instead of a dict lookup by name.
        self._tool_start_hooks = hooks["tool_start"]
        self._tool_end_hooks = hooks["tool_end"]
        self._model_start_hooks = hooks["model_start"]
        self._model_end_hooks = hooks["model_end"]
        self._step_end_hooks = hooks["step_end"]
        self._agent_start_hooks = hooks["agent_start"]
        self._agent_end_hooks = hooks["agent_end"]
        self._volatile = self.config.volatile_arg_keys
        self._format_types = self.config.format_error_types
        self._logged: set[str] = set()
        self._since_sweep = 0
        self._metrics = _make_metrics(meter_provider)
        if "cost_budget" not in self.config.disabled_detectors:
            prewarm()
        self.shared: Any = None
        """Shared state across processes (``config.state``); attached by :mod:`spanbreaker.state`."""
        if self.config.state:
            from .state import attach_shared_state

            attach_shared_state(self)

    # ------------------------------------------------------------------------------------------- public
    def add_listener(self, listener: BreakerListener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: BreakerListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def trip_record(self, trace_id: int | str) -> TripRecord | None:
        """The trip of a trace, live or recently ended (bounded LRU), or None."""
        tid = _to_trace_int(trace_id)
        trace = self._traces.get(tid)
        if trace is not None and trace.breaker.record is not None:
            return trace.breaker.record
        return self._records.get(tid)

    def state(self, trace_id: int | str) -> BreakerState:
        trace = self._traces.get(_to_trace_int(trace_id))
        return trace.breaker.state if trace is not None else BreakerState.CLOSED

    def force_open(self, trace_id: int | str, reason: str = "forced open") -> TripRecord:
        """Open a trace's breaker from outside (a kill switch); its next call is blocked."""
        tid = _to_trace_int(trace_id)
        trace = self._trace(tid, self._clock())
        with trace.lock:
            record = TripRecord("forced", reason, _hex_trace(tid), time_unix_nano=time.time_ns())
            old = trace.breaker.trip(record, self._clock())
            targets = [e.span for e in trace.open.values() if e.kind is Kind.AGENT] or self._root_targets(trace)
        self._after_trip(_Trip(record, targets, None, Tripped, False, True, old, BreakerState.OPEN))
        return record

    def reset(self, trace_id: int | str) -> None:
        """Close a trace's breaker and forget its detection state (budgets are kept)."""
        tid = _to_trace_int(trace_id)
        trace = self._traces.get(tid)
        if trace is None:
            self._records.pop(tid, None)
            return
        with trace.lock:
            old = trace.breaker.reset()
            trace.forget_progress()
        self._records.pop(tid, None)
        if self.shared is not None:
            self._guard(self.shared.reset, tid)
        self._notify_state(_hex_trace(tid), old, BreakerState.CLOSED)

    def end_open_spans(self, trace_id: int | str, reason: str | None = None, *, under: int | None = None) -> int:
        """End every span of the trace that is still open (youngest first). Returns how many were ended.

        Adapters call this when a run was aborted and the instrumentor left spans open (smolagents leaves the
        agent span open when ``run()`` raises). With a trip, the spans carry its marks (once). ``under`` (a span
        id) limits the repair to that span and its descendants, so a caller's own enclosing span stays open.
        """
        tid = _to_trace_int(trace_id)
        trace = self._traces.get(tid)
        if trace is None:
            return 0
        with trace.lock:
            entries = list(trace.open.values())
            if under is not None:
                entries = [e for e in entries if _descends_from(trace.open, e, under)]
            record = trace.breaker.record
        ended = 0
        for entry in reversed(entries):
            span = entry.span
            try:
                if not span.is_recording():
                    continue
                if record is not None and not raw_attributes(span).get(marking.TRIPPED):
                    marking.mark_tripped(span, record.detector, record.reason, {}, self.config.mode)
                elif reason:
                    span.set_status(Status(StatusCode.ERROR, reason))
                span.end()
                ended += 1
            except Exception as exc:
                self._internal_error(exc)
        return ended

    # ----------------------------------------------------------------------------------- SpanProcessor
    # The hot path (on_start, on_end and what they call for a CLOSED trace) is written for the interpreter:
    # fields rather than properties, few Python calls, no objects it can avoid. A Python call or an object
    # costs as much as several dict lookups (BENCHMARKS.md), and this runs for every span the application makes.
    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        try:
            self.stats.spans_started += 1
            if type(span) in _SDK_SPANS:  # the SDK's own span: its fields, not its properties (Python calls each)
                context, name, parent = span._context, span._name, span._parent
                attributes = getattr(span._attributes, "_dict", None)  # what raw_attributes reads, without the call
                if type(attributes) is not dict:
                    attributes = raw_attributes(span)
            else:
                context, name, parent = span.context, span.name, span.parent
                attributes = raw_attributes(span)
            if context is None:
                return
            value = attributes.get("openinference.span.kind")
            kind = KIND_BY_OPENINFERENCE.get(value) if type(value) is str else None  # classify's common case
            if kind is None:
                kind = classify(name, attributes)
            if type(context) is SpanContext:  # a tuple: its items, not its properties (a Python call each)
                trace_id, span_id = context[0], context[1]
            else:
                trace_id, span_id = context.trace_id, context.span_id
            parent_id = None if parent is None else parent[1] if type(parent) is SpanContext else parent.span_id
            gated = kind is _TOOL or kind is _LLM or kind is _AGENT
            now = 0.0
            trace = self._traces.get(trace_id)  # _trace's common case inline: the trace is already known
            if trace is None:
                now = self._clock()
                trace = self._trace(trace_id, now)
            elif gated:  # a trace is idle (TTL) while it starts no call; steps and other spans need no clock
                now = self._clock()
                trace.last_seen = now
            lock = trace.lock
            lock.acquire()
            try:
                open_spans = trace.open
                if trace.root_id is None and (parent is None or parent.is_remote or parent_id not in open_spans):
                    trace.root_id = span_id
                up = open_spans.get(parent_id) if parent_id is not None else None
                if up is not None:
                    scope, chain, step = up.scope, up.chain, up.step
                else:
                    scope, chain, step = None, (), None
                    if self.shared is not None and parent is not None and parent.is_remote:
                        chain = self._guard(self.shared.inherited_chain) or ()  # the caller's agents, from the request
                signal: AgentRun | None = None
                if kind is _AGENT:
                    signal = agent_start(name, attributes, self._cap)
                    scope, chain = trace.scope(signal.name), (*chain, signal.name)
                elif kind is _CHAIN:
                    step = name if isinstance(name, str) else None
                entry = OpenSpan(span, parent_id, kind, scope, chain, step, signal)
                if len(open_spans) < MAX_OPEN_SPANS:
                    open_spans[span_id] = entry
                if not gated:  # CHAIN and OTHER spans: nothing to veto
                    return
                trip = self._gate(trace, entry, up, kind, name, attributes, signal, now)
            finally:
                lock.release()
        except Exception as exc:
            self._internal_error(exc)
            return
        if trip is not None:
            self._after_trip(trip)

    def on_end(self, span: ReadableSpan) -> None:
        try:
            self.stats.spans_ended += 1
            context = span._context if type(span) is ReadableSpan else span.context  # the SDK's: no property call
            if context is None:
                return
            if type(context) is SpanContext:  # a tuple: its items, not its properties (a Python call each)
                trace_id, span_id = context[0], context[1]
            else:
                trace_id, span_id = context.trace_id, context.span_id
            trace = self._traces.get(trace_id)
            if trace is None:
                return
            lock = trace.lock
            lock.acquire()
            try:
                entry = trace.open.pop(span_id, None)
                trip = None
                if entry is not None and entry.kind is not _OTHER:
                    trip = self._account(trace, entry, span)
                if span_id == trace.root_id:
                    self._drop(trace)
            finally:
                lock.release()
        except Exception as exc:
            self._internal_error(exc)
            return
        if trip is not None:
            with contextlib.suppress(Tripped):  # never raise from on_end: later processors would lose the span
                self._after_trip(trip)

    def shutdown(self) -> None:
        if self.shared is not None:
            self._guard(self.shared.close)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    # -------------------------------------------------------------------------------------- internals
    def _trace(self, trace_id: int, now: float) -> TraceState:
        traces = self._traces
        trace = traces.get(trace_id)
        if trace is not None:
            trace.last_seen = now
            return trace
        with self._table_lock:
            trace = traces.get(trace_id)
            if trace is None:
                trace = TraceState(trace_id, self.config.fixation_similarity, now)
                traces[trace_id] = trace
                if len(traces) > self.config.max_traces:
                    self._evict(traces.popitem(last=False)[1])
                self._since_sweep += 1
                if self._since_sweep >= 256:
                    self._since_sweep = 0
                    self._sweep(now)
            return trace

    def _sweep(self, now: float) -> None:
        """Drop traces idle for longer than the TTL (oldest first). Called with the table lock held."""
        deadline = now - self.config.trace_ttl_s
        for tid in list(self._traces.keys())[:64]:
            trace = self._traces[tid]
            if trace.last_seen < deadline:
                del self._traces[tid]
                self._evict(trace)

    def _evict(self, trace: TraceState) -> None:
        self.stats.traces_evicted += 1
        self._keep_record(trace)

    def _keep_record(self, trace: TraceState) -> None:
        record = trace.breaker.record
        if record is not None:
            self._records[trace.trace_id] = record
            if len(self._records) > MAX_RECORDS:
                self._records.popitem(last=False)

    def _gate(self, trace: TraceState, entry: OpenSpan, up: OpenSpan | None, kind: Kind, name: str,
              attributes: Any, signal: Any, now: float) -> _Trip | None:
        """A TOOL, LLM or AGENT span starts: admit it (breaker) and run the start detectors on its inputs."""
        breaker = trace.breaker
        if breaker.record is not None or breaker.state is not _CLOSED or self.shared is not None:
            trip, proceed = self._admit(trace, entry, kind, now)
            if not proceed:
                return trip
        scope = entry.scope
        if scope is None:
            scope = trace.scope("")
        hooks: _Hooks
        if kind is _TOOL:
            trace.totals.tool_calls += 1
            if self.shared is not None:
                self._guard(self.shared.add_usage, trace.trace_id, 0, 0, 1, 0.0)
            if up is not None:
                up.tool_calls += 1
            signal = entry.signal = tool_start(name, attributes, self._volatile, self._cap)
            hooks = self._tool_start_hooks
        elif kind is _LLM:
            trace.totals.model_calls += 1
            signal = entry.signal = model_start(name, attributes, self._cap)
            hooks = self._model_start_hooks
        else:
            hooks = self._agent_start_hooks
        return self._detect(trace, scope, entry, signal, hooks, now, start=True)

    def _detect(self, trace: TraceState, scope: Any, entry: OpenSpan, signal: Any, hooks: _Hooks,
                now: float | None, *, start: bool) -> _Trip | None:
        """Run a hook's detectors: those that always run, then the gated ones once a trace total reached them."""
        trip = self._run(trace, scope, entry, signal, hooks.always, now, start=start)
        if trip is None and hooks.gated and hooks.quiet.reached(
                trace.totals if trace.remote is None else trace.usage()):
            trip = self._run(trace, scope, entry, signal, hooks.gated, now, start=start)
        return trip

    def _run(self, trace: TraceState, scope: Any, entry: OpenSpan, signal: Any,
             hooks: list[Callable[..., Finding | None]], now: float | None, *, start: bool) -> _Trip | None:
        for check in hooks:
            finding = check(trace, scope, entry, signal)
            if finding is not None:
                if not finding.warning:
                    return self._trip_from(trace, entry, finding, now if now is not None else self._clock(),
                                           start=start)
                self._warn(trace, entry, finding)
        return None

    def _admit(self, trace: TraceState, entry: OpenSpan, kind: Kind, now: float) -> tuple[_Trip | None, bool]:
        """The breaker's say on a call once the trace has a trip or shares state: (a trip to act on, whether
        detection goes on). CLOSED local traces never come here."""
        breaker = trace.breaker
        record = breaker.record
        if record is not None:
            if kind is _LLM:
                record.model_calls_after += 1
            elif kind is _TOOL:
                record.tool_calls_after += 1
        if self.shared is not None and breaker.state is _CLOSED:
            remote = self._guard(self.shared.remote_trip, trace.trace_id)
            if remote is not None:
                old = breaker.trip(remote, now)
                return self._decide(trace, entry, remote, now, old, start=True, new_trip=True), False
        if breaker.state is not _CLOSED:
            admission = breaker.admit(now, self.config.half_open_after_s, entry.span.context.span_id)
            if admission is Admission.BLOCK:
                if not self._enforce or record is None:
                    return None, False
                return self._decide(trace, entry, record, now, breaker.state, start=True, new_trip=False), False
            if admission is Admission.PROBE:
                entry.probe = True
                self._notify_state(_hex_trace(trace.trace_id), BreakerState.OPEN, BreakerState.HALF_OPEN)
        return None, True

    def _warn(self, trace: TraceState, entry: OpenSpan, finding: Finding) -> None:
        key = (finding.detector, entry.agent)
        if key in trace.warned:
            return
        trace.warned.add(key)
        self.stats.warnings += 1
        target = entry.span
        if not target.is_recording() and entry.parent_id is not None:
            parent = trace.open.get(entry.parent_id)
            target = parent.span if parent is not None else None
        if target is not None:
            marking.mark_warning(target, finding.detector, finding.reason, finding.evidence)
        if self._metrics is not None:
            self._metrics.warning(finding.detector)

    def _trip_from(self, trace: TraceState, entry: OpenSpan, finding: Finding, now: float, start: bool) -> _Trip:
        span = entry.span
        context = span.context
        record = TripRecord(
            detector=finding.detector, reason=finding.reason, trace_id=_hex_trace(trace.trace_id),
            span_id=_hex_span(context.span_id) if context is not None else None,
            span_name=span.name if isinstance(span.name, str) else None, step=entry.step,
            agent=entry.agent or None, evidence=dict(finding.evidence), time_unix_nano=time.time_ns(),
        )
        old = trace.breaker.trip(record, now)
        self.stats.trips += 1
        if self.shared is not None:
            self._guard(self.shared.publish_trip, trace.trace_id, record)
        return self._decide(trace, entry, record, now, old, start=start, new_trip=True)

    def _decide(self, trace: TraceState, entry: OpenSpan, record: TripRecord, now: float, old: BreakerState,
                *, start: bool, new_trip: bool) -> _Trip:
        targets: list[Any] = []
        if new_trip:
            targets = [entry.span] if entry.span.is_recording() else []
            targets.extend(self._ancestors(trace, entry))
        block = None
        raise_it = False
        if start and self._enforce:
            block = entry.span
            raise_it = True
            trace.open.pop(entry.span.context.span_id, None)
            record.blocked_calls += 1
            self.stats.blocked += 1
        exception = trip_exception_for(_scope_name(entry.span))
        return _Trip(record, targets, block, exception, raise_it, new_trip, old, trace.breaker.state)

    def _ancestors(self, trace: TraceState, entry: OpenSpan) -> list[Any]:
        spans = []
        seen = 0
        parent_id = entry.parent_id
        while parent_id is not None and seen < 256:
            up = trace.open.get(parent_id)
            if up is None:
                break
            spans.append(up.span)
            parent_id = up.parent_id
            seen += 1
        root = trace.open.get(trace.root_id) if trace.root_id is not None else None
        if root is not None and root.span not in spans and root is not entry:
            spans.append(root.span)
        return spans

    def _root_targets(self, trace: TraceState) -> list[Any]:
        root = trace.open.get(trace.root_id) if trace.root_id is not None else None
        return [root.span] if root is not None else []

    def _after_trip(self, trip: _Trip) -> None:
        """Marks, listeners, metrics, then the block and the raise. Runs without any lock held."""
        record, mode = trip.record, self.config.mode
        for span in trip.targets:
            try:
                marking.mark_tripped(span, record.detector, record.reason, record.evidence, mode,
                                     blocked=span is trip.block)
            except Exception as exc:
                self._internal_error(exc)
        if trip.new_trip:
            if self._metrics is not None:
                self._metrics.trip(record.detector, record.agent)
            for callback in self._trip_callbacks:
                self._guard(callback, record)
            for listener in self._listeners:
                if hasattr(listener, "on_trip"):
                    self._guard(listener.on_trip, record)
            if trip.old_state is not trip.new_state:
                self._notify_state(record.trace_id, trip.old_state, trip.new_state)
        if trip.block is None:
            return
        span = trip.block
        try:
            if trip.block not in trip.targets:
                marking.mark_tripped(span, record.detector, record.reason, {}, mode, blocked=True)
            span.end()
        except Exception as exc:
            self._internal_error(exc)
        if self._metrics is not None:
            self._metrics.blocked(record.detector, _kind_label(span))
        if trip.raise_it:
            raise trip.exception(record.detector, record.reason, record.trace_id, record.evidence,
                                 blocked=not trip.new_trip)

    def _account(self, trace: TraceState, entry: OpenSpan, span: ReadableSpan) -> _Trip | None:
        """A tracked span ended: account for what it returned and run the end detectors."""
        now: float | None = None  # read only when needed: most spans neither end a probe nor trip
        if entry.probe:
            now = self._clock()
            ok = span.status.status_code is not StatusCode.ERROR
            new = trace.breaker.probe_ended(ok, now)
            if ok:
                trace.forget_progress()
            self._notify_state(_hex_trace(trace.trace_id), BreakerState.HALF_OPEN, new)
        breaker = trace.breaker
        if breaker.record is not None and (not self._enforce or breaker.state is not _CLOSED):
            return None  # enforce: nothing to learn while OPEN; observe: the first trip is the one reported
        if type(span) is ReadableSpan:  # the SDK's fields: no property calls, no copy of an empty event list
            events, status = span._events or (), span._status
            attributes = getattr(span._attributes, "_dict", None)
            if type(attributes) is not dict:
                attributes = raw_attributes(span)
        else:
            events, status, attributes = span.events, span.status, raw_attributes(span)
        scope = entry.scope
        if scope is None:
            scope = trace.scope("")
        kind = entry.kind
        signal: Any = entry.signal
        hooks: _Hooks
        if kind is _TOOL:
            if not isinstance(signal, ToolCall):
                return None  # admitted without detection (observe mode while OPEN)
            fill_tool_result(signal, attributes, events, status, self._cap, self._format_types)
            scope.tools.record(signal)
            hooks = self._tool_end_hooks
        elif kind is _LLM:
            if not isinstance(signal, ModelCall):
                return None
            fill_model_result(signal, attributes)
            totals = trace.totals
            totals.tokens += signal.tokens
            spent = signal.cost_usd if signal.cost_usd is not None else cost_usd(
                signal.model, signal.provider, signal.prompt_tokens, signal.completion_tokens)
            totals.cost_usd += spent
            if self.shared is not None:
                self._guard(self.shared.add_usage, trace.trace_id, signal.tokens, 1, 0, spent)
            hooks = self._model_end_hooks
        elif kind is _CHAIN:
            code = status._status_code if type(status) is Status else getattr(status, "status_code", None)
            # A clean step (no events, status unset or OK) shares one signal: no object per step.
            signal = _CLEAN_STEP if not events and (code is _UNSET or code is _OK) else StepEnd(
                root_error(events, status, self._format_types))
            hooks = self._step_end_hooks
        else:
            if not isinstance(signal, AgentRun):
                return None
            fill_agent_result(signal, attributes, events, status, self._cap, self._format_types)
            if signal.validation_failed and signal.session:
                count = self._sessions.get(signal.session, 0) + 1
                self._sessions[signal.session] = count
                self._sessions.move_to_end(signal.session)
                if len(self._sessions) > MAX_SESSIONS:
                    self._sessions.popitem(last=False)
                signal.session_failures = count
            if len(entry.chain) >= 2:
                caller = trace.scope(entry.chain[-2])
                caller.delegations.record(ToolCall(signal.name, delegation_key(signal.name, signal.task_key), None,
                                                   signal.output_key, error=signal.error))
            hooks = self._agent_end_hooks
        return self._detect(trace, scope, entry, signal, hooks, now, start=False)

    def _drop(self, trace: TraceState) -> None:
        self._keep_record(trace)
        with self._table_lock:
            if self._traces.get(trace.trace_id) is trace:
                del self._traces[trace.trace_id]

    # ------------------------------------------------------------------------------------------ safety
    def _notify_state(self, trace_hex: str, old: BreakerState, new: BreakerState) -> None:
        for callback in self._state_callbacks:
            self._guard(callback, trace_hex, old, new)
        for listener in self._listeners:
            if hasattr(listener, "on_state_change"):
                self._guard(listener.on_state_change, trace_hex, old, new)

    def _guard(self, function: Callable[..., Any], *args: Any) -> Any:
        try:
            return function(*args)
        except Exception as exc:
            self._internal_error(exc)
            return None

    def _internal_error(self, exc: BaseException) -> None:
        self.stats.internal_errors += 1
        if self._metrics is not None:
            self._metrics.internal_error()
        key = type(exc).__name__
        if key not in self._logged and len(self._logged) < 64:
            self._logged.add(key)
            logger.warning("spanbreaker ignored an internal error (%s); the application is unaffected", key,
                           exc_info=exc)


def _descends_from(open_spans: Any, entry: OpenSpan, ancestor_id: int) -> bool:
    """True when ``entry`` is the open span ``ancestor_id`` or one of its open descendants."""
    seen = 0
    current: OpenSpan | None = entry
    while current is not None and seen < 256:
        context = current.span.context
        if context is not None and context.span_id == ancestor_id:
            return True
        current = open_spans.get(current.parent_id) if current.parent_id is not None else None
        seen += 1
    return False


def _scope_name(span: Any) -> str | None:
    scope = getattr(span, "instrumentation_scope", None)
    name = getattr(scope, "name", None)
    return name if isinstance(name, str) else None


def _kind_label(span: Any) -> str:
    attributes = getattr(span, "attributes", None) or {}
    return classify(getattr(span, "name", ""), attributes).name


def _make_metrics(meter_provider: Any) -> Any:
    try:
        from .metrics import BreakerMetrics
    except ImportError:
        return None
    try:
        return BreakerMetrics(meter_provider=meter_provider)
    except Exception:
        return None
