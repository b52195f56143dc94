"""The breaker engine: span ids, names, attributes, events and status in; a :class:`~spanbreaker.verdict.Verdict`
out. No SDK span objects: the SDK façade (:class:`~spanbreaker.BreakerSpanProcessor`) reads the SDK's fields and
feeds them here positionally, a replay can feed recorded spans the same way.

Flow: span -> convention (:mod:`spanbreaker.conventions`: what kind of span, what it says) -> signal
(:mod:`spanbreaker.signals`) -> engine (per-trace state and breaker) -> detectors -> verdict -> façade.

Contract: :meth:`BreakerEngine.start` and :meth:`BreakerEngine.end` never raise. Every error (odd attributes, a
bug, shared state failing) is counted in :attr:`stats`, logged once, and swallowed. They decide under the
trace's lock and return; acting on a verdict (marks, listeners, the raise) happens outside it, in the caller,
through :meth:`announce` for the listeners. Work per span is O(1) in the length of the run.

The hot path (``start``, ``end`` and what they call for a CLOSED trace) is written for the interpreter: fields
rather than properties, positional arguments, few Python calls, no objects it can avoid. A Python call or an
object costs as much as several dict lookups on CPython 3.11 (BENCHMARKS.md), and this runs for every span.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import Status, StatusCode

from .breaker import Admission, BreakerListener, BreakerState, TraceBreaker, TripRecord
from .config import BreakerConfig
from .conventions import classify, prompt_calls
from .conventions import openinference as _oi
from .conventions.frameworks import logged_usage
from .conventions.read import (
    agent_start,
    error_detail,
    fill_agent_result,
    fill_model_result,
    fill_tool_result,
    model_start,
    root_error,
    tool_start,
)
from .detectors import FORCED, Detector, Finding, build_detectors
from .detectors.base import Quiet
from .kinds import Kind
from .pricing import call_cost, prewarm
from .private_calls import current as _private_call
from .signals import AgentRun, ModelCall, StepEnd, ToolCall, delegation_key
from .tracestate import MAX_OPEN_SPANS, NAME_CHARS, NO_ATTRIBUTES, OpenSpan, TraceState
from .verdict import Action, Verdict

if TYPE_CHECKING:
    from .state.protocol import SharedState

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
    steered: int = 0
    """Tool calls failed with :class:`~spanbreaker.Steered` (``response="steer"``) or marked so (observe)."""
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


_CLEAN_STEP = StepEnd(None)
_OI_KIND, _OI_KINDS = _oi.SPAN_KIND, _oi.KINDS
# Enum members as module constants for the hot path: on Python 3.11 ``Kind.TOOL`` is a class attribute lookup
# through the enum's metaclass that costs as much as a function call.
_AGENT, _CHAIN, _LLM, _TOOL, _OTHER = Kind.AGENT, Kind.CHAIN, Kind.LLM, Kind.TOOL, Kind.OTHER
_CLOSED, _OPEN = BreakerState.CLOSED, BreakerState.OPEN
_UNSET, _OK, _ERROR = StatusCode.UNSET, StatusCode.OK, StatusCode.ERROR
_WARN, _STEER, _TRIP, _BLOCK = Action.WARN, Action.STEER, Action.TRIP, Action.BLOCK
_STEERED, _PENDING = "spanbreaker.steered", "spanbreaker.steer_pending"
"""Keys in an agent scope's slots: the detectors whose steer this agent already had (their next finding trips);
the steer an end hook found, waiting for the agent's next call of that tool."""
_PROMPT_TURN = "spanbreaker.prompt_turn"
"""Key in an agent scope's slots: the last prompt turn whose tool calls were read (:meth:`_calls_in_prompt`)."""
_NO_ARGUMENTS: Mapping[str, Any] = {}
_weakref = weakref.ref


def hex_trace(trace_id: int) -> str:
    return f"{trace_id:032x}"


def hex_span(span_id: int) -> str:
    return f"{span_id:016x}"


def to_trace_int(trace_id: int | str) -> int:
    return int(trace_id, 16) if isinstance(trace_id, str) else int(trace_id)


class BreakerEngine:
    """Per-trace circuit breakers fed by span data (see the module docstring for the contract).

    Args:
        config: the validated, immutable :class:`BreakerConfig`.
        listeners, on_trip, on_state_change: told of trips and state changes by :meth:`announce`.
        clock: a monotonic clock in seconds (tests and replay inject one).
        meter_provider: where trip metrics go; the global one by default (a no-op without an SDK).
    """

    def __init__(
        self,
        config: BreakerConfig,
        *,
        listeners: Iterable[BreakerListener] = (),
        on_trip: Callable[[TripRecord], None] | None = None,
        on_state_change: Callable[[str, BreakerState, BreakerState], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        meter_provider: Any = None,
    ) -> None:
        self.config = config
        self.stats = Stats()
        self._clock = clock
        self._enforce = config.mode == "enforce"
        self._cap = config.max_attribute_chars
        self.traces: OrderedDict[int, TraceState] = OrderedDict()
        """Live traces by id (LRU order). Read it through :meth:`trace` and :meth:`live_trace_ids` from outside."""
        self._records: OrderedDict[int, TraceBreaker] = OrderedDict()
        """The breakers of recently ended traces that tripped (bounded LRU), for their trip records."""
        self._sessions: OrderedDict[str, int] = OrderedDict()
        self._table_lock = threading.Lock()
        self._listeners: list[Any] = list(listeners)
        self._trip_callbacks: list[Callable[[TripRecord], None]] = [on_trip] if on_trip else []
        self._state_callbacks: list[Callable[[str, BreakerState, BreakerState], None]] = (
            [on_state_change] if on_state_change else [])
        self._detectors = build_detectors(config)
        self._steer = config.response == "steer"
        self._steerable = frozenset(type(d).id for d in self._detectors if type(d).steerable)
        self._steers: OrderedDict[int, TripRecord] = OrderedDict()
        hooks = {hook: _Hooks.build(self._detectors, hook) for hook in Detector.HOOKS}
        # One attribute per hook: the hot path reads an attribute instead of a dict lookup by name.
        self._tool_start_hooks = hooks["tool_start"]
        self._tool_end_hooks = hooks["tool_end"]
        self._model_start_hooks = hooks["model_start"]
        self._model_end_hooks = hooks["model_end"]
        self._step_end_hooks = hooks["step_end"]
        self._agent_start_hooks = hooks["agent_start"]
        self._agent_end_hooks = hooks["agent_end"]
        self._volatile_keys = config.volatile_arg_keys
        self._format_types = config.format_error_types
        self._count_history = "session_bloat" not in config.disabled_detectors
        """Count an agent's first prompt's session history (its only reader is ``session_bloat``)."""
        self._logged: set[str] = set()
        self._since_sweep = 0
        self._metrics = _make_metrics(meter_provider)
        if "cost_budget" not in config.disabled_detectors:
            prewarm()
        self.shared: SharedState | None = None
        """Shared state across processes (``config.state``); attached by :mod:`spanbreaker.state`."""
        self.on_model_usage: Callable[[int, int, float], None] | None = None
        """Called with (span id, tokens, USD) as a model call's end is counted toward the budgets: a replay's
        per-step figures take the engine's own count rather than reading every call's usage a second time."""

    # ------------------------------------------------------------------------------------------- queries
    def trace(self, trace_id: int) -> TraceState | None:
        """The live state of a trace, or None (shared state and propagation read open spans through this)."""
        return self.traces.get(trace_id)

    def live_trace_ids(self, limit: int) -> list[int]:
        """The ids of the ``limit`` most recently started live traces, oldest first."""
        with self._table_lock:
            return list(self.traces.keys())[-limit:]

    def live_count(self) -> int:
        """How many traces are live."""
        return len(self.traces)

    def trip_record(self, trace_id: int | str) -> TripRecord | None:
        """The trip of a trace, live or recently ended (bounded LRU), or None: the latest, once a probe closed its
        breaker and it tripped again."""
        breaker = self._breaker_of(to_trace_int(trace_id))
        return breaker.record if breaker is not None else None

    def first_trip_record(self, trace_id: int | str) -> TripRecord | None:
        """The first trip of a trace, live or recently ended, or None: where an enforced run would have stopped,
        whatever the trace did after it (what replay reports)."""
        breaker = self._breaker_of(to_trace_int(trace_id))
        return breaker.first if breaker is not None else None

    def _breaker_of(self, tid: int) -> TraceBreaker | None:
        trace = self.traces.get(tid)
        if trace is not None and trace.breaker.record is not None:
            return trace.breaker
        return self._records.get(tid)

    def steer_record(self, trace_id: int | str) -> TripRecord | None:
        """The first steer of a trace (``response="steer"``), live or recently ended (bounded LRU), or None."""
        return self._steers.get(to_trace_int(trace_id))

    def state(self, trace_id: int | str) -> BreakerState:
        trace = self.traces.get(to_trace_int(trace_id))
        return trace.breaker.state if trace is not None else _CLOSED

    def open_spans(self, trace_id: int | str, under: int | None = None) -> tuple[list[Any], TripRecord | None]:
        """(the handles of the trace's open spans, oldest first; its trip record). ``under`` (a span id) keeps
        only that span and its open descendants."""
        trace = self.traces.get(to_trace_int(trace_id))
        if trace is None:
            return [], None
        with trace.lock:
            entries = list(trace.open.values())
            if under is not None:
                entries = [e for e in entries if _descends_from(trace.open, e, under)]
            return [e.handle for e in entries], trace.breaker.record

    # ------------------------------------------------------------------------------------------ controls
    def add_listener(self, listener: BreakerListener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: BreakerListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def force_open(self, trace_id: int | str, reason: str = "forced open") -> Verdict:
        """Open a trace's breaker from outside (a kill switch); its next call is blocked. The verdict marks the
        trace's open agent spans (else its root); the caller applies it."""
        tid = to_trace_int(trace_id)
        trace = self._trace(tid, self._clock())
        with trace.lock:
            record = TripRecord(FORCED, reason, hex_trace(tid), time_unix_nano=time.time_ns())
            old = trace.breaker.trip(record, self._clock())
            targets = [e for e in trace.open.values() if e.kind is _AGENT]
            if not targets:
                root = trace.open.get(trace.root_id) if trace.root_id is not None else None
                targets = [root] if root is not None else []
        return Verdict(_TRIP, record.detector, record.reason, record.evidence, record,
                       tuple(e.span_id for e in targets), tuple(e.handle for e in targets), None, _AGENT, True, old,
                       _OPEN)

    def reset(self, trace_id: int | str) -> None:
        """Close a trace's breaker and forget its detection state (budgets are kept)."""
        tid = to_trace_int(trace_id)
        trace = self.traces.get(tid)
        if trace is None:
            self._records.pop(tid, None)
            return
        with trace.lock:
            old = trace.breaker.reset()
            trace.forget_progress()
        self._records.pop(tid, None)
        if self.shared is not None:
            self.guard(self.shared.reset, tid)
        self._notify_state(hex_trace(tid), old, _CLOSED)

    def close(self) -> None:
        if self.shared is not None:
            self.guard(self.shared.close)

    # ------------------------------------------------------------------------------------------ the feed
    def start(self, trace_id: int, span_id: int, parent_id: int | None, parent_remote: bool, name: str,
              attributes: Mapping[str, Any], handle: Any = None) -> Verdict | None:
        """A span started. ``handle`` is the caller's own object for the span (the façade's SDK span), handed
        back in verdicts to mark or block it; the engine never looks into it."""
        try:
            self.stats.spans_started += 1
            value = attributes.get(_OI_KIND)
            kind = _OI_KINDS.get(value) if type(value) is str else None  # openinference.kind's common case
            openinference = type(value) is str  # the span says its kind OpenInference's way (OpenSpan.openinference)
            logged = False
            if kind is None:
                kind = classify(name, attributes)
                logged = kind is _OTHER and logged_usage(attributes)
            gated = kind is _TOOL or kind is _LLM or kind is _AGENT
            now = 0.0
            trace = self.traces.get(trace_id)  # _trace's common case inline: the trace is already known
            if trace is None:
                now = self._clock()
                trace = self._trace(trace_id, now)
            elif gated:  # a trace is idle (TTL) while it starts no call; steps and other spans need no clock
                now = self._clock()
                trace.last_seen = now
            lock = trace.lock
            entry: OpenSpan | None = None
            lock.acquire()
            try:
                open_spans = trace.open
                if trace.root_id is None and (parent_id is None or parent_remote or parent_id not in open_spans):
                    trace.root_id = span_id
                up = open_spans.get(parent_id) if parent_id is not None else None
                if kind is _LLM and up is not None and up.kind is _LLM:
                    # The same model call seen by a lower layer (a client's instrumentor under a framework's:
                    # LiteLLM or OpenAI spans inside a smolagents or Agents SDK model span): counted once, above.
                    kind, gated = _OTHER, False
                elif kind is _LLM and _mixed(trace, openinference) and (
                        double := _open_double(open_spans, openinference)) is not None:
                    # The same model call seen by two instrumentors side by side (OpenLIT's and OpenInference's
                    # LangChain callbacks, each parenting its own spans): counted once, on the first.
                    double.paired = True
                    kind, gated = _OTHER, False
                elif kind is _CHAIN and up is not None and up.kind is _CHAIN and up.openinference is not openinference:
                    # The same step seen by a second instrumentor (OpenLIT's smolagents step directly inside
                    # OpenInference's): one step, above. One convention's chains nest (LangChain's): each its own.
                    kind = _OTHER
                if up is not None:
                    scope, chain, step = up.scope, up.chain, up.step
                else:
                    scope, chain, step = None, (), None
                    if self.shared is not None and parent_remote:
                        chain = self.guard(self.shared.inherited_chain) or ()  # the caller's agents, from the request
                signal: Any = None
                if kind is _AGENT:
                    signal = agent_start(name, attributes, self._cap)
                    if not signal.task_known:  # hidden by the instrumentor's settings: an adapter may show it
                        private = _private_call()
                        if private is not None and private.arguments is not None and private.name == signal.name:
                            signal = agent_start(name, private.on(attributes), self._cap)
                    scope = trace.scope(signal.name)
                    if up is None or up.kind is not _AGENT or not chain or chain[-1] != signal.name:
                        chain = (*chain, signal.name)
                    # else: the agent's span directly inside its own (the application's span named after the agent
                    # around a framework's, or two instrumentors' spans for one run): one agent, not a re-entry. A
                    # real re-entry comes through a call or a step of the agent, never directly.
                kept = name if type(name) is not str or len(name) <= NAME_CHARS else name[:NAME_CHARS]
                if kind is _CHAIN:
                    step = kept if isinstance(kept, str) else None
                    if up is not None:  # a step stands for a turn where no model call is recorded; a root is a run
                        (scope if scope is not None else trace.scope("")).tools.step_turn()
                # Model and tool calls weakly where they can be: an abandoned call span the caller dropped, its
                # prompt and all, is not kept alive here. Agent and step spans strongly: an adapter ends those
                # when an aborted run leaked them (end_open_spans), and only the breaker still holds them then.
                ref: Any = handle
                weak = False
                if kind is _LLM or kind is _TOOL:
                    try:
                        ref = _weakref(handle)
                        weak = True
                    except TypeError:  # None, a plain value: held as it is
                        ref = handle
                if logged:
                    self._account_logged(trace, attributes)
                if not gated:  # CHAIN and OTHER spans: nothing to veto, no attributes kept
                    if len(open_spans) < MAX_OPEN_SPANS:
                        open_spans[span_id] = OpenSpan(span_id, parent_id, kind, scope, chain, step, signal, kept,
                                                       NO_ATTRIBUTES, ref, openinference)
                    return None
                # The attributes only while the start hooks run (finally below): never kept on an open span.
                entry = OpenSpan(span_id, parent_id, kind, scope, chain, step, signal, kept, attributes, ref,
                                 openinference, weak)
                if len(open_spans) < MAX_OPEN_SPANS:
                    open_spans[span_id] = entry
                # A TOOL, LLM or AGENT span starts: admit it (breaker), then run the start detectors on its inputs.
                # Inline rather than a method: a call with this many arguments costs more than the rest of a
                # CLOSED trace's admission.
                breaker = trace.breaker
                if breaker.record is not None or breaker.state is not _CLOSED or self.shared is not None:
                    verdict, proceed = self._admit(trace, entry, kind, now)
                    if not proceed:
                        return verdict
                if scope is None:
                    scope = trace.scope("")
                hooks: _Hooks
                if kind is _TOOL:
                    signal = entry.signal = tool_start(name, attributes, self._volatile_keys, self._cap)
                    if not signal.args_known:  # none on the span (or hidden): an adapter may show them in process
                        private = _private_call()
                        if private is not None and private.arguments is not None and private.name == signal.name:
                            attributes = entry.attributes = private.on(attributes)
                            signal = entry.signal = tool_start(name, attributes, self._volatile_keys, self._cap)
                    # The same call seen by a second instrumentor: directly inside (OpenInference's AutoGen tool
                    # span around autogen-core's GenAI one) or side by side (OpenLIT's and OpenInference's
                    # LangChain callbacks), counted and judged once.
                    double = up if up is not None and up.kind is _TOOL and _same_call(up, entry, signal) else (
                        _open_double(open_spans, openinference, signal) if _mixed(trace, openinference) else None)
                    if double is not None and double.signal.args_known:  # type: ignore[union-attr]
                        double.paired = True  # on the first span
                        entry.kind = _OTHER
                        return None
                    if double is not None:
                        # The first span started bare (OpenLIT's ``execute_tool``: its arguments come as it ends).
                        # It was counted as it started; this span, which shows the arguments now, is judged in its
                        # place.
                        double.kind = _OTHER
                    else:
                        trace.totals.tool_calls += 1
                        if self.shared is not None:
                            self.guard(self.shared.add_usage, trace_id, 0, 0, 1, 0.0)
                        if up is not None:
                            up.tool_calls += 1
                    if self.shared is not None and signal.args_known:
                        self.guard(self.shared.tool_started, trace_id, scope.name, signal, attributes)
                    hooks = self._tool_start_hooks
                    if self._steer and _PENDING in scope.slots:  # an end hook's steer waits for this tool
                        pending = self._deliver(trace, scope, entry, signal)
                        if pending is not None:
                            return pending
                elif kind is _LLM:
                    totals = trace.totals
                    warned: Verdict | None = None
                    first = self._count_history and not scope.tools.model_seen  # the call session_bloat judges
                    if totals.tool_calls == trace.calls_from_prompts:  # no tool span yet: its prompt may show calls
                        warned = self._calls_in_prompt(trace, scope, entry, attributes, now, True)
                        if warned is not None and warned.action is not _WARN:
                            return warned
                    totals.model_calls += 1
                    scope.tools.model_turn()  # repeats count once per model turn (progress.py)
                    signal = entry.signal = model_start(name, attributes, self._cap, first)
                    signal.first_in_scope = first
                    if warned is not None:
                        return _after(warned, self._detect(trace, scope, entry, signal, self._model_start_hooks,
                                                           now, True))
                    hooks = self._model_start_hooks
                else:
                    hooks = self._agent_start_hooks
                return self._detect(trace, scope, entry, signal, hooks, now, True)
            finally:
                if entry is not None:
                    entry.attributes = NO_ATTRIBUTES
                lock.release()
        except Exception as exc:
            self.internal_error(exc)
            return None

    def end(self, trace_id: int, span_id: int, attributes: Mapping[str, Any], events: Sequence[Any],
            status: Any) -> Verdict | None:
        """A span ended. ``status`` is the OTel API's ``Status`` (or any object with ``status_code`` and
        ``description``); ``events`` have ``name`` and ``attributes``."""
        try:
            self.stats.spans_ended += 1
            trace = self.traces.get(trace_id)
            if trace is None:
                return None
            lock = trace.lock
            lock.acquire()
            try:
                entry = trace.open.pop(span_id, None)
                if entry is None or entry.kind is _OTHER:
                    return None
                # A tracked span ended: account for what it returned and run the end hooks. Inline rather than a
                # method, as in start: this runs for every tracked span.
                now: float | None = None  # read only when needed: most spans neither end a probe nor trip
                # The API's Status: its field, not its property (a Python call); codes compared by identity.
                code = status._status_code if type(status) is Status else getattr(status, "status_code", None)
                if entry.probe:
                    now = self._clock()
                    ok = code is not _ERROR
                    new = trace.breaker.probe_ended(ok, now)
                    if ok:
                        trace.forget_progress()
                    self._notify_state(hex_trace(trace.trace_id), BreakerState.HALF_OPEN, new)
                breaker = trace.breaker
                if breaker.record is not None and (not self._enforce or breaker.state is not _CLOSED):
                    return None  # enforce: nothing to learn while OPEN; observe: the first trip is the one reported
                scope = entry.scope
                if scope is None:
                    scope = trace.scope("")
                kind = entry.kind
                signal: Any = entry.signal
                # The one clean-status rule: a span that ended clean (no events, status unset or OK) failed at
                # nothing, decided without the call to root_error; a clean step shares one signal.
                error = None if not events and (code is _UNSET or code is _OK) else root_error(
                    events, status, self._format_types)
                hooks: _Hooks
                if kind is _TOOL:
                    if not isinstance(signal, ToolCall):
                        return None  # admitted without detection (observe mode while OPEN)
                    entry.attributes = attributes  # popped: held only while the end hooks run
                    detail = None if error is None else error_detail(events, status)
                    fill_tool_result(signal, attributes, error, self._cap, self._format_types, self._volatile_keys,
                                     detail)
                    if not signal.result_known or not signal.args_known:  # an adapter may show them in process
                        private = _private_call()
                        if private is not None and private.name == signal.name and (
                                private.result is not None or private.arguments is not None):
                            attributes = entry.attributes = private.on(attributes)
                            fill_tool_result(signal, attributes, error, self._cap, self._format_types,
                                             self._volatile_keys, detail)
                    if self.shared is None:
                        scope.tools.record(signal)
                    else:
                        tools = scope.tools
                        before = tools.change_seq
                        tools.record(signal)
                        self.guard(self.shared.tool_ended, trace.trace_id, scope.name, signal, attributes,
                                   tools.change_seq != before, tools.counted)
                    hooks = self._tool_end_hooks
                elif kind is _LLM:
                    if not isinstance(signal, ModelCall):
                        return None
                    # not on the span at start (util-genai), nor shown in process then
                    prompt_at_end = signal.input_chars == 0 and not entry.prompt_read
                    fill_model_result(signal, attributes, self._cap)
                    totals = trace.totals
                    totals.tokens += signal.tokens
                    spent = call_cost(signal)
                    totals.cost_usd += spent
                    if self.on_model_usage is not None:
                        self.on_model_usage(span_id, signal.tokens, spent)
                    if self.shared is not None:
                        self.guard(self.shared.add_usage, trace.trace_id, signal.tokens, 1, 0, spent)
                    if prompt_at_end and totals.tool_calls == trace.calls_from_prompts:
                        found = self._calls_in_prompt(trace, scope, entry, attributes, now, False)
                        if found is not None:
                            if found.action is not _WARN:
                                return found
                            return _after(found, self._detect(trace, scope, entry, signal, self._model_end_hooks,
                                                              now, False))
                    hooks = self._model_end_hooks
                elif kind is _CHAIN:
                    signal = _CLEAN_STEP if error is None else StepEnd(error)  # no object per clean step
                    hooks = self._step_end_hooks
                else:
                    if not isinstance(signal, AgentRun):
                        return None
                    fill_agent_result(signal, attributes, error, self._cap)
                    if not signal.output_known or not signal.task_known:  # an adapter may show them in process
                        private = _private_call()
                        if private is not None and private.name == signal.name and (
                                private.result is not None or private.arguments is not None):
                            fill_agent_result(signal, private.on(attributes), error, self._cap)
                    if signal.validation_failed and signal.session:
                        count = self._sessions.get(signal.session, 0) + 1
                        self._sessions[signal.session] = count
                        self._sessions.move_to_end(signal.session)
                        if len(self._sessions) > MAX_SESSIONS:
                            self._sessions.popitem(last=False)
                        signal.session_failures = count
                    elif signal.session and signal.error is None and self._sessions:
                        # a run that ended cleanly: the session's failures are no longer in a row (validation_failures)
                        self._sessions.pop(signal.session, None)
                    if len(entry.chain) >= 2:
                        caller = trace.scope(entry.chain[-2])
                        caller.delegations.record(ToolCall(
                            signal.name, delegation_key(signal.name, signal.task_key), None, signal.output_key,
                            error=signal.error, args_known=signal.task_known,
                            result_known=signal.output_known or signal.error is not None))
                    hooks = self._agent_end_hooks
                return self._detect(trace, scope, entry, signal, hooks, now, False)
            finally:
                if span_id == trace.root_id:
                    self._drop(trace)
                lock.release()
        except Exception as exc:
            self.internal_error(exc)
            return None

    def announce(self, verdict: Verdict) -> None:
        """Tell metrics and listeners what a verdict decided. The caller runs this outside any lock, after
        marking the spans and before ending a blocked span (listeners see the marks). Never raises."""
        metrics = self._metrics
        for warning in (*verdict.warnings, verdict) if verdict.warnings else (verdict,):
            if warning.action is _WARN and metrics is not None:
                metrics.warning(warning.detector)
        record = verdict.record
        if record is None:
            return
        if verdict.action is _STEER:
            if metrics is not None:
                metrics.steer(record.detector, record.agent)
            return
        if verdict.new_trip:
            if metrics is not None:
                metrics.trip(record.detector, record.agent)
            for callback in self._trip_callbacks:
                self.guard(callback, record)
            for listener in self._listeners:
                if hasattr(listener, "on_trip"):
                    self.guard(listener.on_trip, record)
            if verdict.old_state is not verdict.new_state:
                self._notify_state(record.trace_id, verdict.old_state, verdict.new_state)
        if verdict.action is _BLOCK and metrics is not None:
            metrics.blocked(record.detector, verdict.kind.name)

    # -------------------------------------------------------------------------------------- internals
    def _account_logged(self, trace: TraceState, attributes: Mapping[str, Any]) -> None:
        """A streamed model call's usage, logged as a record of its own once the stream ended (Pydantic Logfire):
        added to the trace's tokens and cost, no call counted, so the budgets veto the next model call."""
        usage = ModelCall(None)
        fill_model_result(usage, attributes, self._cap)
        spent = call_cost(usage)
        trace.totals.tokens += usage.tokens
        trace.totals.cost_usd += spent
        if self.shared is not None:
            self.guard(self.shared.add_usage, trace.trace_id, usage.tokens, 0, 0, spent)

    def _trace(self, trace_id: int, now: float) -> TraceState:
        traces = self.traces
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
        for tid in list(self.traces.keys())[:64]:
            trace = self.traces[tid]
            if trace.last_seen < deadline:
                del self.traces[tid]
                self._evict(trace)

    def _evict(self, trace: TraceState) -> None:
        self.stats.traces_evicted += 1
        self._keep_record(trace)

    def _keep_record(self, trace: TraceState) -> None:
        if trace.breaker.record is not None:
            self._records[trace.trace_id] = trace.breaker
            if len(self._records) > MAX_RECORDS:
                self._records.popitem(last=False)

    def _drop(self, trace: TraceState) -> None:
        self._keep_record(trace)
        with self._table_lock:
            if self.traces.get(trace.trace_id) is trace:
                del self.traces[trace.trace_id]

    def _calls_in_prompt(self, trace: TraceState, scope: Any, model: OpenSpan, attributes: Mapping[str, Any],
                         now: float | None, start: bool) -> Verdict | None:
        """The tool calls a model call's prompt shows ran since the agent's previous model call, in a trace that
        recorded no tool span (an agent written as a loop around a model client; :mod:`.conventions.prompt_calls`).

        Each is fed to the tool detectors as a call whose arguments and result arrived together, like a tool span
        keyed at its end: recorded in the agent's history, then judged by the end hooks. A finding is this model
        call's: it is the call that would act on the repeated result, so it is the one vetoed (enforce) and
        marked; the evidence says the calls were read from the prompt. A retried model call re-sends the same
        prompt: its last turn is read once; a turn that follows a new user request starts the agent's detection
        afresh (a conversation in one trace: what the calls for the last request repeated is past). A trace's first
        model call reads every turn since the user's request
        (a loop with no span around it makes a trace of each model call, and only its prompt shows the run), the
        earlier turns only to bring the detectors' state up to date. Where the prompt reaches the span only when the
        call ends (``start`` False: OpenTelemetry's util-genai sets the messages at the end; an instrumentor may set
        ``input.value`` just after the start), a trip opens the breaker then and the next call is the one vetoed.
        """
        prompt = prompt_calls.prompt_of(attributes)
        if prompt is None:  # not on the span (hidden by the instrumentor's settings): an adapter may show it
            private = _private_call()
            if private is None or private.prompt is None:
                return None
            prompt = prompt_calls.prompt_of(private.prompt)
            if prompt is None:
                return None
        if start:  # the request as sent: read once (its record at the end, serialised otherwise, would repeat it)
            model.prompt_read = True
        whole_run = trace.totals.model_calls == (0 if start else 1)  # the trace's first model call: the run so far
        after_request = False
        if whole_run:
            turns = prompt_calls.run_so_far(prompt)
        else:
            turn, after_request = prompt_calls.last_turn_after(prompt)
            turns = [turn] if turn is not None else []
        if not turns:
            return None
        position, calls = turns[-1]
        seen = (position, tuple(call.call_id for call in calls))
        if scope.slots.get(_PROMPT_TURN) == seen:
            return None
        if after_request:
            scope.forget()  # the user asked again: a new run in the same trace (a chat's conversation), budgets kept
            scope.tools.model_turn()  # the model call that asked for these calls, in the new run's history
        scope.slots[_PROMPT_TURN] = seen
        found: Verdict | None = None
        kept = model.attributes
        try:
            last = len(turns) - 1
            for number, (_, turn_calls) in enumerate(turns):
                if whole_run:  # the model call that asked for this turn's calls, which this trace did not see
                    scope.tools.model_turn()
                found = self._prompt_turn(trace, scope, model, turn_calls, now, start, found, number == last)
                if found is not None and found.action is not _WARN:
                    return found
        finally:
            model.attributes = kept
        return found

    def _prompt_turn(self, trace: TraceState, scope: Any, model: OpenSpan, calls: list[prompt_calls.PromptCall],
                     now: float | None, start: bool, found: Verdict | None, report: bool) -> Verdict | None:
        """One turn's calls read from ``model``'s prompt, fed to the tool hooks (``model.attributes`` stands for
        each call's ended span while its hooks run; the caller puts them back). ``report`` False: an earlier turn
        of the run so far, which only brings the detectors' state up to date."""
        start_hooks, end_hooks = self._tool_start_hooks, self._tool_end_hooks
        for call in calls:
            trace.totals.tool_calls += 1
            trace.calls_from_prompts += 1
            if self.shared is not None:
                self.guard(self.shared.add_usage, trace.trace_id, 0, 0, 1, 0.0)
            signal = tool_start(call.name, _NO_ARGUMENTS, self._volatile_keys, self._cap)  # keyed at its end
            model.attributes = ended = {_oi.TOOL_NAME: call.name, _oi.INPUT: call.arguments,
                                        _oi.OUTPUT: call.result}
            found = self._prompt_hooks(trace, scope, model, signal, start_hooks, now, start, found, report)
            if found is not None and found.action is not _WARN:
                return found
            fill_tool_result(signal, ended, call.error, self._cap, self._format_types, self._volatile_keys)
            scope.tools.record(signal)
            found = self._prompt_hooks(trace, scope, model, signal, end_hooks, now, start, found, report)
            if found is not None and found.action is not _WARN:
                return found
        return found

    def _prompt_hooks(self, trace: TraceState, scope: Any, model: OpenSpan, call: ToolCall, hooks: _Hooks,
                      now: float | None, start: bool, found: Verdict | None, report: bool) -> Verdict | None:
        """A tool hook's detectors on a call read from ``model``'s prompt, through :meth:`_run`: findings are
        reported on the model call, and their evidence says where the call was read. Without ``report`` what
        the detectors find is dropped: a loop an earlier turn was in counts only if the last turn still is (the
        detectors trip on every call past their threshold)."""
        checks = hooks.always
        if hooks.gated and hooks.quiet.reached(trace.totals if trace.remote is None else trace.usage()):
            checks = [*checks, *hooks.gated]
        if not report:
            for check in checks:
                check(trace, scope, model, call)
            return found
        verdict = self._run(trace, scope, model, call, checks, now, start, found)
        if verdict is not None and verdict is not found:
            for reached in (*verdict.warnings, verdict):  # a trip's evidence is its record's (the raised Tripped's)
                reached.evidence["calls_from_prompt"] = True
        return verdict

    def _detect(self, trace: TraceState, scope: Any, entry: OpenSpan, signal: Any, hooks: _Hooks,
                now: float | None, start: bool) -> Verdict | None:
        """Run a hook's detectors: those that always run, then the gated ones once a trace total reached them.

        The common case (no detector reports) runs here without a further call; :meth:`_found` takes over from
        the first detector that reports."""
        for check in hooks.always:
            finding = check(trace, scope, entry, signal)
            if finding is not None:
                return self._found(trace, scope, entry, signal, hooks, check, finding, now, start)
        if hooks.gated and hooks.quiet.reached(trace.totals if trace.remote is None else trace.usage()):
            return self._run(trace, scope, entry, signal, hooks.gated, now, start, None)
        return None

    def _found(self, trace: TraceState, scope: Any, entry: OpenSpan, signal: Any, hooks: _Hooks,
               check: Callable[..., Finding | None], finding: Finding, now: float | None,
               start: bool) -> Verdict | None:
        """:meth:`_detect` after ``check`` reported ``finding``: act on it, then run the hooks after ``check``."""
        verdict = self._report(trace, entry, finding, now, start, None)
        if verdict is not None and verdict.action is not _WARN:
            return verdict
        always = hooks.always
        verdict = self._run(trace, scope, entry, signal, always[always.index(check) + 1:], now, start, verdict)
        if (verdict is None or verdict.action is _WARN) and hooks.gated and hooks.quiet.reached(
                trace.totals if trace.remote is None else trace.usage()):
            verdict = self._run(trace, scope, entry, signal, hooks.gated, now, start, verdict)
        return verdict

    def _run(self, trace: TraceState, scope: Any, entry: OpenSpan, signal: Any,
             hooks: list[Callable[..., Finding | None]], now: float | None, start: bool,
             found: Verdict | None) -> Verdict | None:
        """The first trip among ``hooks``, else the latest warning, else None (``found``: the warning reached so
        far on this span)."""
        for check in hooks:
            finding = check(trace, scope, entry, signal)
            if finding is not None:
                found = self._report(trace, entry, finding, now, start, found)
                if found is not None and found.action is not _WARN:
                    return found
        return found

    def _report(self, trace: TraceState, entry: OpenSpan, finding: Finding, now: float | None, start: bool,
                found: Verdict | None) -> Verdict | None:
        """The verdict on one finding: a trip (warnings reached before it attached), else the latest warning
        (earlier ones attached), else ``found`` (a repeated warning says nothing new)."""
        if finding.action is _WARN:
            verdict = self._warn(trace, entry, finding, start)
            if verdict is None:
                return found
        else:
            steer: Verdict | bool | None = False
            if self._steer and entry.kind is _TOOL and finding.detector in self._steerable:
                steer = self._steer_from(trace, entry, finding, start)
                if steer is None:
                    return found  # an end hook's steer, waiting for the tool's next call
            if isinstance(steer, Verdict):
                verdict = steer
            else:
                verdict = self._trip_from(trace, entry, finding, now if now is not None else self._clock(), start)
        if found is not None:
            verdict.warnings = (*found.warnings, found)
        return verdict

    def _steer_from(self, trace: TraceState, entry: OpenSpan, finding: Finding, start: bool) -> Verdict | bool | None:
        """A steerable finding on a tool call under ``response="steer"``: the agent's first from this detector
        steers (a verdict, or None while an end hook's steer waits for the tool's next call); True when this
        agent already had its steer from this detector, so the finding trips."""
        scope = entry.scope if entry.scope is not None else trace.scope("")
        steered: set[str] | None = scope.slots.get(_STEERED)
        if steered is None:
            steered = scope.slots[_STEERED] = set()
        if finding.detector in steered:
            return True
        if not start and self._enforce:  # the call already ran: the tool's next call is the one failed
            tool = finding.evidence.get("tool") or finding.evidence.get("last_tool") or entry.name
            scope.slots[_PENDING] = (finding, tool)
            return None
        steered.add(finding.detector)
        return self._steer_verdict(trace, entry, finding, start)

    def _deliver(self, trace: TraceState, scope: Any, entry: OpenSpan, call: ToolCall) -> Verdict | None:
        """The agent's next tool call after an end hook's steer: the same tool is failed with the steer; another
        tool means the agent changed course by itself, and the steer is dropped (not spent)."""
        finding, tool = scope.slots.pop(_PENDING)
        if call.name != tool:
            return None
        scope.slots[_STEERED].add(finding.detector)
        return self._steer_verdict(trace, entry, finding, True)

    def _steer_verdict(self, trace: TraceState, entry: OpenSpan, finding: Finding, start: bool) -> Verdict:
        """STEER: the breaker stays CLOSED; in enforce mode the call (still open) is failed, never run; the
        span carries the steer marks either way (its parent, when an observed end hook found it)."""
        name = entry.name
        record = TripRecord(
            detector=finding.detector, reason=finding.reason, trace_id=hex_trace(trace.trace_id),
            span_id=hex_span(entry.span_id), span_name=name if isinstance(name, str) else None, step=entry.step,
            agent=entry.agent or None, evidence=dict(finding.evidence), time_unix_nano=time.time_ns(),
        )
        self.stats.steered += 1
        steers = self._steers
        if trace.trace_id not in steers:
            steers[trace.trace_id] = record
            if len(steers) > MAX_RECORDS:
                steers.popitem(last=False)
        target = entry if start else trace.open.get(entry.parent_id) if entry.parent_id is not None else None
        block = None
        if start and self._enforce:
            block = entry.handle
            trace.open.pop(entry.span_id, None)
        ids, handles = ((target.span_id,), (target.handle,)) if target is not None else ((), ())
        return Verdict(_STEER, finding.detector, finding.reason, record.evidence, record, ids, handles, block,
                       entry.kind)

    def _admit(self, trace: TraceState, entry: OpenSpan, kind: Kind, now: float) -> tuple[Verdict | None, bool]:
        """The breaker's say on a call once the trace has a trip or shares state: (a verdict to act on, whether
        detection goes on). CLOSED local traces never come here."""
        breaker = trace.breaker
        record = breaker.record
        if record is not None:
            first = breaker.first
            if kind is _LLM:
                record.model_calls_after += 1
                if first is not record and first is not None:
                    first.model_calls_after += 1
            elif kind is _TOOL:
                record.tool_calls_after += 1
                if first is not record and first is not None:
                    first.tool_calls_after += 1
        if self.shared is not None and breaker.state is _CLOSED:
            remote = self.guard(self.shared.remote_trip, trace.trace_id)
            if remote is not None:
                old = breaker.trip(remote, now)
                return self._decide(trace, entry, remote, old, True, True), False
        if breaker.state is not _CLOSED:
            admission = breaker.admit(now, self.config.half_open_after_s, entry.span_id)
            if admission is Admission.BLOCK:
                if not self._enforce or record is None:
                    return None, False
                return self._decide(trace, entry, record, breaker.state, True, False), False
            if admission is Admission.PROBE:
                entry.probe = True
                self._notify_state(hex_trace(trace.trace_id), _OPEN, BreakerState.HALF_OPEN)
        return None, True

    def _warn(self, trace: TraceState, entry: OpenSpan, finding: Finding, start: bool) -> Verdict | None:
        """A warning, once per (detector, agent) in a trace. It goes on the span itself while it is open (start
        hooks), else on its parent."""
        key = (finding.detector, entry.agent)
        if key in trace.warned:
            return None
        trace.warned.add(key)
        self.stats.warnings += 1
        target = entry if start else trace.open.get(entry.parent_id) if entry.parent_id is not None else None
        ids, handles = ((target.span_id,), (target.handle,)) if target is not None else ((), ())
        return Verdict(_WARN, finding.detector, finding.reason, finding.evidence, None, ids, handles, None, entry.kind)

    def _trip_from(self, trace: TraceState, entry: OpenSpan, finding: Finding, now: float, start: bool) -> Verdict:
        name = entry.name
        record = TripRecord(
            detector=finding.detector, reason=finding.reason, trace_id=hex_trace(trace.trace_id),
            span_id=hex_span(entry.span_id), span_name=name if isinstance(name, str) else None, step=entry.step,
            agent=entry.agent or None, evidence=dict(finding.evidence), time_unix_nano=time.time_ns(),
        )
        old = trace.breaker.trip(record, now)
        self.stats.trips += 1
        if self.shared is not None:
            self.guard(self.shared.publish_trip, trace.trace_id, record)
        return self._decide(trace, entry, record, old, start, True)

    def _decide(self, trace: TraceState, entry: OpenSpan, record: TripRecord, old: BreakerState, start: bool,
                new_trip: bool) -> Verdict:
        """The verdict on a trip or a closed door: which spans to mark, whether the call is blocked."""
        targets: list[OpenSpan] = []
        if new_trip:
            if start:  # an ended span takes no more marks: its ancestors carry them
                targets.append(entry)
            targets.extend(self._ancestors(trace, entry))
        action, block = _TRIP, None
        if start and self._enforce:
            action, block = _BLOCK, entry.handle
            trace.open.pop(entry.span_id, None)
            record.blocked_calls += 1
            self.stats.blocked += 1
        return Verdict(action, record.detector, record.reason, record.evidence, record,
                       tuple(e.span_id for e in targets), tuple(e.handle for e in targets), block, entry.kind,
                       new_trip, old, trace.breaker.state)

    def _ancestors(self, trace: TraceState, entry: OpenSpan) -> list[OpenSpan]:
        """The open ancestors of ``entry``, nearest first, then the trace's root if it is open and not among them."""
        found: list[OpenSpan] = []
        seen = 0
        parent_id = entry.parent_id
        while parent_id is not None and seen < 256:
            up = trace.open.get(parent_id)
            if up is None:
                break
            found.append(up)
            parent_id = up.parent_id
            seen += 1
        root = trace.open.get(trace.root_id) if trace.root_id is not None else None
        if root is not None and root is not entry and all(up is not root for up in found):
            found.append(root)
        return found


    # ------------------------------------------------------------------------------------------ safety
    def _notify_state(self, trace_hex: str, old: BreakerState, new: BreakerState) -> None:
        for callback in self._state_callbacks:
            self.guard(callback, trace_hex, old, new)
        for listener in self._listeners:
            if hasattr(listener, "on_state_change"):
                self.guard(listener.on_state_change, trace_hex, old, new)

    def guard(self, function: Callable[..., Any], *args: Any) -> Any:
        """Call ``function``; an exception is counted and logged once, and None returned."""
        try:
            return function(*args)
        except Exception as exc:
            self.internal_error(exc)
            return None

    def internal_error(self, exc: BaseException) -> None:
        self.stats.internal_errors += 1
        if self._metrics is not None:
            self._metrics.internal_error()
        key = type(exc).__name__
        if key not in self._logged and len(self._logged) < 64:
            self._logged.add(key)
            logger.warning("spanbreaker ignored an internal error (%s); the application is unaffected", key,
                           exc_info=exc)


def _after(warned: Verdict, verdict: Verdict | None) -> Verdict:
    """``verdict`` with the warning reached before it on the same span attached, else the warning."""
    if verdict is None:
        return warned
    verdict.warnings = (warned, *verdict.warnings)
    return verdict


def _mixed(trace: TraceState, openinference: bool) -> bool:
    """Whether this trace's model and tool spans come from OpenInference and from another convention (two
    instrumentors on one framework): only then can a call's double be open beside it. Records this span's."""
    seen = trace.conventions | (1 if openinference else 2)
    trace.conventions = seen
    return seen == 3


def _open_double(open_spans: Mapping[int, OpenSpan], openinference: bool, call: ToolCall | None = None
                 ) -> OpenSpan | None:
    """An open span that is the same call as the one starting, seen by an instrumentor of the other convention: a
    model call (``call`` None) or a call of the same tool (see :func:`_same_call`) not yet paired with its double.
    Open at once means one call: two instrumentors' callbacks around one execution."""
    for span in open_spans.values():
        if span.paired or span.openinference is openinference:
            continue
        if call is None:
            if span.kind is _LLM:
                return span
        elif span.kind is _TOOL and _same_tool(span.signal, call):
            return span
    return None


def _same_call(outer: OpenSpan, inner: OpenSpan, call: ToolCall) -> bool:
    """Whether a tool span directly inside another is the same call seen by a second instrumentor: the same tool,
    the two spans not both OpenInference's. Within OpenInference, a tool span inside its own span of the same tool
    is a new execution (BeeAI's retry attempts), counted as one. When the outer span already says with which
    arguments, it is the call; when it started bare, the inner one takes its place (see ``start``)."""
    return not (outer.openinference and inner.openinference) and _same_tool(outer.signal, call)


def _same_tool(signal: Any, call: ToolCall) -> bool:
    """Two spans' calls of one tool, at least one of them knowing the arguments (two bare spans stay two calls)."""
    return isinstance(signal, ToolCall) and signal.name == call.name and (signal.args_known or call.args_known)


def _descends_from(open_spans: Mapping[int, OpenSpan], entry: OpenSpan, ancestor_id: int) -> bool:
    """True when ``entry`` is the open span ``ancestor_id`` or one of its open descendants."""
    seen = 0
    current: OpenSpan | None = entry
    while current is not None and seen < 256:
        if current.span_id == ancestor_id:
            return True
        current = open_spans.get(current.parent_id) if current.parent_id is not None else None
        seen += 1
    return False


def _make_metrics(meter_provider: Any) -> Any:
    try:
        from .metrics import BreakerMetrics
    except ImportError:
        return None
    try:
        return BreakerMetrics(meter_provider=meter_provider)
    except Exception:
        return None
