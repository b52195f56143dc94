"""BreakerSpanProcessor: the OpenTelemetry SDK façade over the breaker engine.

Add it to any SDK ``TracerProvider``, first or last: on_start marks are exported either way, and the
processors added after it see a blocked span start before it ends (``_start_later``)::

    provider.add_span_processor(spanbreaker.BreakerSpanProcessor())

The façade is the only place that knows the SDK's span objects: it reads their fields, feeds the
:class:`~spanbreaker.engine.BreakerEngine` positionally, and applies the :class:`~spanbreaker.verdict.Verdict`
that comes back (marks spans, tells listeners, ends a blocked span, raises). Detection itself is the engine's.

Contract (in the words of the SDK's ``SpanProcessor``): ``on_start`` and ``on_end`` are called synchronously on
the thread that starts or ends the span. They never raise anything but the intended trip: every other error
(odd attributes, a bug, a listener failing) is counted in :attr:`stats`, logged once, and swallowed. Work per
span is O(1) in the length of the run and bounded in attribute size.

Where the trip reaches the framework: ``on_start`` of a TOOL, LLM or AGENT span raises
:class:`~spanbreaker.Tripped` (or the variant registered for the span's instrumentation scope) when a detector
vetoes the call or the trace's breaker is OPEN. The vetoed span is ended here, marked
``spanbreaker.blocked``, so it is exported rather than lost. A trip found in ``on_end`` (a result, a token
count) opens the breaker; the next call in the trace is the one blocked. Under ``response="steer"`` a loop
detector's first finding on a TOOL span ends that span as steered and raises :class:`~spanbreaker.Steered`
instead (or the variant registered for its scope), an ordinary exception the framework hands to the model.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from opentelemetry import context as context_api
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.context import Context
from opentelemetry.sdk import trace as sdk_trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, SynchronousMultiSpanProcessor
from opentelemetry.sdk.util import BoundedList
from opentelemetry.trace import SpanContext, Status, StatusCode

from . import marking, unwinding
from .breaker import BreakerListener, BreakerState, TripRecord
from .config import BreakerConfig
from .coverage import check_spans
from .engine import BreakerEngine, Stats
from .errors import Tripped, steer_exception_for, steer_supported, trip_exception_for
from .tracestate import NO_ATTRIBUTES
from .verdict import Action, Verdict

if TYPE_CHECKING:
    from .state.protocol import SharedState

__all__ = ["BreakerSpanProcessor", "Stats"]

_BLOCK, _STEER, _WARN = Action.BLOCK, Action.STEER, Action.WARN

_SDK_SPANS = frozenset({Span, getattr(sdk_trace, "_Span", Span), ReadableSpan})
"""The SDK's span classes (the tracer makes ``_Span``; ``on_end`` gets a ``ReadableSpan``): the hot path reads
their fields; any other span object through :class:`_PublicFields` (a test pins the SDK's classes and fields)."""


class _PublicFields:
    """Any other span object (a wrapper, a future SDK) under the SDK's field names, read once from its public
    properties: the hooks have one way to read a span, the SDK's fields (its properties are a Python call each
    on 3.11, and ``events`` copies the list)."""

    __slots__ = ("_attributes", "_context", "_events", "_name", "_parent", "_status")

    def __init__(self, span: Any) -> None:
        self._context = _context_tuple(getattr(span, "context", None))
        self._parent = _context_tuple(getattr(span, "parent", None))
        self._name = getattr(span, "name", None)
        self._attributes = getattr(span, "attributes", None)
        self._events = getattr(span, "events", None) or ()
        self._status = getattr(span, "status", None)


def _context_tuple(context: Any) -> Any:
    """A span context as the API's ``SpanContext`` is laid out (a tuple: trace id, span id, remote), or None."""
    if context is None or type(context) is SpanContext:
        return context
    return (context.trace_id, context.span_id, bool(getattr(context, "is_remote", False)))


def _mapping(attributes: Any) -> Mapping[str, Any]:
    """A span's attributes as a mapping to read: the plain dict inside the SDK's ``BoundedAttributes`` (its own
    lookups are Python-level methods; the hooks inline this case), else the mapping as it is, None as empty."""
    if type(attributes) is BoundedAttributes:
        return attributes._dict  # type: ignore[no-any-return]
    return attributes if attributes is not None else NO_ATTRIBUTES


def raw_attributes(span: Any) -> Mapping[str, Any]:
    """A span's attributes, read as the hot path reads them."""
    return _mapping((span if type(span) in _SDK_SPANS else _PublicFields(span))._attributes)


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
        self.engine = BreakerEngine(self.config, listeners=listeners, on_trip=on_trip,
                                    on_state_change=on_state_change, clock=clock, meter_provider=meter_provider)
        self.stats: Stats = self.engine.stats
        # The engine's feed as attributes: the hot path reads one attribute instead of two per span.
        self._start = self.engine.start
        self._end = self.engine.end
        if self.config.state:
            from .state import attach_shared_state

            attach_shared_state(self)

    @property
    def shared(self) -> SharedState | None:
        """Shared state across processes (``config.state``); attached by :mod:`spanbreaker.state`."""
        return self.engine.shared

    @shared.setter
    def shared(self, value: SharedState | None) -> None:
        self.engine.shared = value

    # ------------------------------------------------------------------------------------------- public
    def add_listener(self, listener: BreakerListener) -> None:
        self.engine.add_listener(listener)

    def remove_listener(self, listener: BreakerListener) -> None:
        self.engine.remove_listener(listener)

    def trip_record(self, trace_id: int | str) -> TripRecord | None:
        """The trip of a trace, live or recently ended (bounded LRU), or None."""
        return self.engine.trip_record(trace_id)

    def state(self, trace_id: int | str) -> BreakerState:
        return self.engine.state(trace_id)

    def force_open(self, trace_id: int | str, reason: str = "forced open") -> TripRecord:
        """Open a trace's breaker from outside (a kill switch); its next call is blocked."""
        verdict = self.engine.force_open(trace_id, reason)
        self._apply(verdict)
        assert verdict.record is not None
        return verdict.record

    def reset(self, trace_id: int | str) -> None:
        """Close a trace's breaker and forget its detection state (budgets are kept)."""
        self.engine.reset(trace_id)

    def end_open_spans(self, trace_id: int | str, reason: str | None = None, *, under: int | None = None) -> int:
        """End every span of the trace that is still open (youngest first). Returns how many were ended.

        Adapters call this when a run was aborted and the instrumentor left spans open (smolagents leaves the
        agent span open when ``run()`` raises). With a trip, the spans carry its marks (once). ``under`` (a span
        id) limits the repair to that span and its descendants, so a caller's own enclosing span stays open.
        """
        spans, record = self.engine.open_spans(trace_id, under)
        ended = 0
        for span in reversed(spans):
            try:
                if span is None or not span.is_recording():
                    continue
                if record is not None and not raw_attributes(span).get(marking.TRIPPED):
                    marking.mark_tripped(span, record.detector, record.reason, {}, self.config.mode)
                elif reason:
                    span.set_status(Status(StatusCode.ERROR, reason))
                span.end()
                ended += 1
            except Exception as exc:
                self.engine.internal_error(exc)
        return ended

    # ----------------------------------------------------------------------------------- SpanProcessor
    # The SDK's fields rather than its properties, and tuple items rather than SpanContext's properties (a Python
    # call each on 3.11); any other span object is read through the same names (_PublicFields). Everything after
    # the reads is the engine's, written for the interpreter the same way.
    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        try:
            fields: Any = span if type(span) in _SDK_SPANS else _PublicFields(span)
            context, parent, attributes = fields._context, fields._parent, fields._attributes
            if context is None:
                return
            verdict = self._start(
                context[0], context[1], None if parent is None else parent[1], parent is not None and parent[2],
                fields._name, attributes._dict if type(attributes) is BoundedAttributes else _mapping(attributes),
                span)
        except Exception as exc:
            self.engine.internal_error(exc)
            return
        if verdict is not None:
            self._apply(verdict, span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        try:
            fields: Any = span if type(span) in _SDK_SPANS else _PublicFields(span)
            context, attributes, events = fields._context, fields._attributes, fields._events
            if context is None:
                return
            verdict = self._end(
                context[0], context[1],
                attributes._dict if type(attributes) is BoundedAttributes else _mapping(attributes),
                # the SDK's BoundedList as its deque: a C-speed truth test rather than a Python-level __len__
                events._dq if type(events) is BoundedList else events,  # type: ignore[attr-defined]
                fields._status)
        except Exception as exc:
            self.engine.internal_error(exc)
            return
        if verdict is not None:
            with contextlib.suppress(Tripped):  # never raise from on_end: later processors would lose the span
                self._apply(verdict)

    def shutdown(self) -> None:
        self.engine.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    # ------------------------------------------------------------------------------------ verdicts
    def _apply(self, verdict: Verdict, started: Span | None = None, parent_context: Context | None = None) -> None:
        """The one place a verdict reaches the SDK: warnings, marks, listeners, then the block and the raise.
        Runs without any lock held. ``started``: the span whose ``on_start`` this is (see ``_start_later``)."""
        engine = self.engine
        check_spans(verdict.marks)  # warns once if a framework's spans arrive without its adapter (coverage.py)
        for warning in (*verdict.warnings, verdict) if verdict.warnings else (verdict,):
            if warning.action is _WARN:
                for span in warning.marks:
                    if span is None:  # the caller dropped it (the engine holds spans weakly)
                        continue
                    try:
                        marking.mark_warning(span, warning.detector, warning.reason, warning.evidence)
                    except Exception as exc:
                        engine.internal_error(exc)
        record, mode, block = verdict.record, self.config.mode, verdict.block
        if verdict.action is _STEER and record is not None:
            self._steer(verdict, record, block, started, parent_context)
            return
        if record is not None:
            for span in verdict.marks:
                if span is None:
                    continue
                try:
                    marking.mark_tripped(span, record.detector, record.reason, record.evidence, mode,
                                         blocked=block is not None and span is block)
                except Exception as exc:
                    engine.internal_error(exc)
        engine.announce(verdict)
        if verdict.action is not _BLOCK or record is None:
            return
        if started is not None:
            self._start_later(started, parent_context)
        if block is not None:
            try:
                if all(span is not block for span in verdict.marks):
                    marking.mark_tripped(block, record.detector, record.reason, {}, mode, blocked=True)
                _end_unsuppressed(block)
            except Exception as exc:
                engine.internal_error(exc)
        exception = trip_exception_for(_scope_name(block))
        tripped = exception(record.detector, record.reason, record.trace_id, record.evidence,
                            blocked=not verdict.new_trip)
        if started is not None:  # raised out of a span's start, through the application's frames
            unwinding.before_raise(tripped)
        raise tripped

    def _start_later(self, span: Span, parent_context: Context | None) -> None:
        """Give the processors added after this one the blocked (or steered) span's ``on_start``, before it ends and
        the breaker raises.

        The SDK's ``SynchronousMultiSpanProcessor`` calls its processors in the order they were added and stops
        at the first that raises: without this, a processor added after the breaker (Phoenix's ``register``,
        Agno's ``setup_tracing``, the app's exporter added after ``spanbreaker.instrument()``) would get the
        blocked span's ``on_end`` without its ``on_start``, and one that keeps only spans it saw start (a
        batching exporter keyed on start, a tail sampler) would drop it. Called only on the path that then
        ends the span and raises, so the multi-processor's loop stops here and no processor sees ``on_start``
        twice. Reads the processors the span was started with (``span._span_processor``), so it holds in
        whatever order and at whatever time they were added; any other span processor container (a
        ``ConcurrentMultiSpanProcessor`` runs ``on_start`` in parallel: the order is not ours to give) is
        left as it is.
        """
        multi = getattr(span, "_span_processor", None)
        if not isinstance(multi, SynchronousMultiSpanProcessor):
            return
        processors = getattr(multi, "_span_processors", ())
        index = next((i for i, processor in enumerate(processors) if processor is self), None)
        if index is None:
            return
        for later in processors[index + 1:]:
            try:
                later.on_start(span, parent_context=parent_context)
            except Exception as exc:  # theirs, not ours to raise: the intended trip follows
                self.engine.internal_error(exc)

    def _steer(self, verdict: Verdict, record: TripRecord, block: Any, started: Span | None = None,
               parent_context: Context | None = None) -> None:
        """A steer: mark the span; in enforce mode end it (exported, marked blocked) and raise
        :class:`~spanbreaker.Steered`, an ordinary exception the framework's tool-error path hands to the model.
        Where the framework would swallow that exception and run the call anyway (``steer_supported``: LangChain),
        the call is stopped with the hard trip instead: marked tripped, ``Tripped`` raised."""
        mode = self.config.mode
        hard = block is not None and not steer_supported(_scope_name(block))
        mark = marking.mark_tripped if hard else marking.mark_steered
        for span in verdict.marks:
            try:
                mark(span, record.detector, record.reason, record.evidence, mode,
                     blocked=block is not None and span is block)
            except Exception as exc:
                self.engine.internal_error(exc)
        self.engine.announce(verdict)
        if block is None:
            return
        if started is not None:  # the raise below stops the SDK's loop: the later processors first
            self._start_later(started, parent_context)
        try:
            if all(span is not block for span in verdict.marks):
                mark(block, record.detector, record.reason, {}, mode, blocked=True)
            _end_unsuppressed(block)
        except Exception as exc:
            self.engine.internal_error(exc)
        scope = _scope_name(block)
        if not hard:
            raise steer_exception_for(scope)(record.detector, record.reason, record.trace_id, record.evidence)
        tripped = trip_exception_for(scope)(record.detector, record.reason, record.trace_id, record.evidence)
        if started is not None:
            unwinding.before_raise(tripped)
        raise tripped


_SUPPRESSION_KEYS = (context_api._SUPPRESS_INSTRUMENTATION_KEY, "suppress_instrumentation")
"""The context keys that suppress instrumentation (the current one, and the string key older instrumentations set)."""


def _end_unsuppressed(span: Any) -> None:
    """End a span the breaker stopped, with instrumentation not suppressed. ``on_start`` may run inside suppression
    (Pydantic Logfire's outermost span processor runs every ``on_start`` so, and drops any ``on_end`` that arrives
    while it is on): ending the blocked span there would lose it, unexported and unmarked everywhere."""
    current = context_api.get_current()
    if not any(context_api.get_value(key, current) for key in _SUPPRESSION_KEYS):
        span.end()
        return
    for key in _SUPPRESSION_KEYS:
        current = context_api.set_value(key, False, current)
    token = context_api.attach(current)
    try:
        span.end()
    finally:
        context_api.detach(token)


def _scope_name(span: Any) -> str | None:
    scope = getattr(span, "instrumentation_scope", None)
    name = getattr(scope, "name", None)
    return name if isinstance(name, str) else None
