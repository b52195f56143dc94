"""Shared breaker state on Redis: one breaker per trace across processes and hosts.

Why this shape: the span processor runs on the application's thread, before every model and tool call, so it
must never wait on the network. Everything that touches Redis runs on two daemon threads:

* the *flusher* wakes every ``state_staleness_s`` (or at once when a trip is published) and sends, in one
  pipeline, the usage this process added since the last flush (a small Lua script per trace: atomic, exactly
  once) and reads back the shared totals of every trace live in this process; the difference between the
  shared total and what this process contributed becomes ``TraceState.remote``, which budgets add to local
  spending. A trace can therefore overrun a budget by at most what the *other* processes spend in one
  staleness window (plus one in-flight call per process).
* the *subscriber* listens on ``<prefix>:trips``: a trip (or kill switch) published anywhere lands in an
  in-memory dict that ``remote_trip`` reads on the hot path, so the trace latches OPEN here before its next
  call. The trip is also kept in the trace's hash, so a process that missed the message (Redis was down)
  picks it up at its next pull.

Redis down, slow or restarted: every call has a short socket timeout and no retries, failures are counted
(``processor.stats.state_errors``), one warning is logged per outage, detection goes on with the local view,
and unsent usage is kept and sent when Redis is back (a per-process sequence number makes a batch that timed
out after being applied count once; a hash lost in a restart is re-seeded with this process's cumulative
contribution). Only figures, ids and the trip record (detector, reason, evidence figures) are stored.

An outage must not grow memory or work with its length: while Redis is down each cycle sends one PING instead of
building and sending the whole queue again; a trace that ends meanwhile keeps only its figures (the book lets go
of the processor's trace state); and at most ``MAX_BACKLOG`` ended traces and queued trip messages wait for
Redis: beyond that the oldest are dropped, counted (``stats.backlog_dropped`` and
``processor.stats.state_errors``) and logged once per outage.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..breaker import TripRecord
from ..signals import ToolCall
from ..tracestate import Totals
from . import calls
from .calls import LEDGER_LUA
from .fleet import FleetRule, fleet_value
from .propagation import inherited_chain, register
from .quiet import quiet

if TYPE_CHECKING:
    from ..processor import BreakerSpanProcessor

logger = logging.getLogger("spanbreaker.state")

SOCKET_TIMEOUT_S = 0.5
"""Default for every Redis call (override with ``?socket_timeout=`` in the URL); a call never blocks longer."""
NANO_USD = 1_000_000_000
"""Cost is stored as integer nano-dollars so concurrent increments add up exactly (no float drift)."""
MAX_PULL = 10_000
"""Traces whose shared totals are read per flush (the most recently started first)."""
TRIP_TIMEOUT_S = 0.1
"""Longest a tripping call waits to publish its trip before leaving it to the flusher."""
WARN_EVERY_S = 60.0
"""One warning per outage, and no more than one a minute when Redis flaps (later ones are logged at INFO)."""
MAX_REMOTE_TRIPS = 10_000
"""Trips heard from other processes and not yet consumed here (oldest dropped first)."""
MAX_BACKLOG = 10_000
"""Ended traces whose usage, and trip/reset messages, wait for an unreachable Redis (oldest dropped first).
An ended trace waits as a few integers (about 0.7 KiB), so a full backlog is a few MiB however long the outage."""

_USAGE_LUA = ("""
local f = 's:' .. ARGV[1]
local seq = tonumber(ARGV[2])
local last = redis.call('HGET', KEYS[1], f)
local applied = true
if not last then
  redis.call('HINCRBY', KEYS[1], 't', ARGV[8])
  redis.call('HINCRBY', KEYS[1], 'm', ARGV[9])
  redis.call('HINCRBY', KEYS[1], 'c', ARGV[10])
  redis.call('HINCRBY', KEYS[1], 'n', ARGV[11])
  redis.call('HSET', KEYS[1], f, seq)
elseif tonumber(last) < seq then
  redis.call('HINCRBY', KEYS[1], 't', ARGV[4])
  redis.call('HINCRBY', KEYS[1], 'm', ARGV[5])
  redis.call('HINCRBY', KEYS[1], 'c', ARGV[6])
  redis.call('HINCRBY', KEYS[1], 'n', ARGV[7])
  redis.call('HSET', KEYS[1], f, seq)
else
  applied = false
end
if applied then
""" + LEDGER_LUA + """
end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return redis.call('HMGET', KEYS[1], 't', 'm', 'c', 'n', 'trip')
""")
"""Apply one process's batch to a trace once: by delta when its previous batch is there, by its cumulative
contribution when the hash is new or was lost (expired, Redis restarted), then its tool-call observations
(:mod:`.calls`). Returns the shared totals."""

_FIELDS = ("t", "m", "c", "n", "trip")


def trace_key(prefix: str, trace_id: int | str) -> str:
    return f"{prefix}:trace:{trace_hex(trace_id)}"


def trips_channel(prefix: str) -> str:
    return f"{prefix}:trips"


def trace_hex(trace_id: int | str) -> str:
    value = int(trace_id, 16) if isinstance(trace_id, str) else int(trace_id)
    if not 0 < value < 1 << 128:
        raise ValueError(f"trace id {trace_id!r}: expected a non-zero 128-bit id (32 hex digits)")
    return f"{value:032x}"


def make_client(url: str, timeout_s: float = SOCKET_TIMEOUT_S) -> Any:
    """A redis-py client that never retries and never waits longer than ``timeout_s`` per call."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
                                retry=Retry(NoBackoff(), 0), health_check_interval=0)


def encode_trip(record: TripRecord, origin: str, trip_id: str) -> str:
    return json.dumps({"op": "trip", "trace": record.trace_id, "origin": origin, "id": trip_id,
                       "record": record.as_dict()}, default=str, separators=(",", ":"))


def decode_record(payload: dict[str, Any]) -> TripRecord:
    raw = payload.get("record") or {}
    known = {k: raw[k] for k in ("detector", "reason", "trace_id", "span_id", "span_name", "step", "agent",
                                 "evidence", "time_unix_nano") if k in raw}
    known.setdefault("detector", "forced")
    known.setdefault("reason", "opened elsewhere")
    known.setdefault("trace_id", str(payload.get("trace", "")))
    record = TripRecord(**known)
    record.evidence = dict(record.evidence or {})
    record.evidence.setdefault("origin", str(payload.get("origin", "")))
    return record


@dataclass(slots=True)
class _Book:
    """This process's bookkeeping for one trace."""

    owner: Any = None
    """The TraceState the current contributions belong to (a dropped-and-restarted trace starts afresh); None
    once the trace ended here, so an outage does not keep the whole trace state alive for a few figures."""
    fleet: str | None = None
    """The trace's fleet value (fleet rule), read once from its spans' resource."""
    pending: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    """tokens, model calls, tool calls, nano-USD not yet handed to the flusher."""
    sent: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    """What ``owner`` has handed to the flusher: subtracted from the shared total to get the others' share."""
    total: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    """Everything this process ever added to the trace (re-seeds a hash lost in a restart)."""
    calls: list[str] = field(default_factory=list)
    """Tool-call observations not yet handed to the flusher, flat: key, result, counted (:mod:`.calls`)."""
    lost: bool = False
    """Observations were dropped (a long outage): the ledger is told something changed."""
    changes: int = 0
    """Calls made here that changed something, in this process's view (any agent of the trace)."""
    taken_changes: int = 0
    """``changes`` when the flusher last took the observations: streaks read back are valid while equal."""
    watch: dict[int, None] = field(default_factory=dict)
    """Keys of the last :data:`~.calls.WATCHED` calls made here, least recent first: their streaks are read back."""
    streaks: tuple[int, dict[int, int]] | None = None
    """The shared streaks last read back, and the ``taken_changes`` they answer."""


@dataclass(slots=True)
class _Batch:
    """One trace's share of a flush: usage delta and cumulative total, and its call observations."""

    tid: int
    delta: list[int]
    total: list[int]
    lost: bool
    calls: list[str]


@dataclass
class SharedStats:
    cycles: int = 0
    """Flusher cycles run, whether Redis answered or not (each one settles the backlog first)."""
    flushes: int = 0
    errors: int = 0
    outages: int = 0
    trips_published: int = 0
    trips_received: int = 0
    resets_received: int = 0
    backlog_dropped: int = 0
    """Ended traces' unsent usage and queued trip/reset messages dropped because the backlog was full."""


class RedisSharedState:
    """The object ``processor.shared`` points to. Its hot-path methods only touch memory."""

    def __init__(self, processor: BreakerSpanProcessor, url: str, *, prefix: str | None = None,
                 staleness_s: float | None = None, ttl_s: float | None = None, client: Any = None) -> None:
        config = processor.config
        self.processor = processor
        self.url = url
        self.prefix = prefix if prefix is not None else config.state_prefix
        self.staleness_s = max(0.005, staleness_s if staleness_s is not None else config.state_staleness_s)
        self.ttl_s = max(1, round(ttl_s if ttl_s is not None else config.trace_ttl_s))
        self.origin = uuid.uuid4().hex[:16]
        self.stats = SharedStats()
        self.channel = trips_channel(self.prefix)
        self._volatile_keys: frozenset[str] = frozenset(config.volatile_arg_keys)
        self._cap: int = config.max_attribute_chars
        self._client = client if client is not None else make_client(url)
        self._script = self._client.register_script(_USAGE_LUA)
        self._trip_client: Any = None
        self._repeating: set[int] = set()
        """Traces where a call of this process has a shared streak of 2 or more: read back at every cycle."""
        self._touched: set[int] = set()
        """Traces with a model, tool or agent call since the last flush: the ones whose shared totals are read."""
        self._error_metric = _error_counter()
        self._lock = threading.Lock()
        self._books: dict[int, _Book] = {}
        """Traces live in the processor (and ones that ended since the last cycle)."""
        self._ended: OrderedDict[int, _Book] = OrderedDict()
        """Ended traces whose usage waits for Redis, oldest first: at most ``MAX_BACKLOG``."""
        self._ops: list[tuple[str, int, str]] = []
        self._inflight: tuple[int, list[_Batch]] | None = None
        self._seq = 0
        self._trips: OrderedDict[int, TripRecord] = OrderedDict()
        self._delivered: dict[int, str] = {}
        self._local = threading.local()
        self._degraded = False
        self._warned_at = -WARN_EVERY_S
        self._overflowed = False
        self._refreshed_at = 0.0
        self.fleet = FleetRule(config, self.prefix) if FleetRule.enabled(config) else None
        self._stop = threading.Event()
        self._wake = threading.Event()
        processor.add_listener(_ForcedTripPublisher(self))
        register(processor)
        self._flusher = threading.Thread(target=quiet(self._flush_loop), name="spanbreaker-state-flush", daemon=True)
        self._subscriber = threading.Thread(target=quiet(self._subscribe_loop), name="spanbreaker-state-sub",
                                            daemon=True)
        self._flusher.start()
        self._subscriber.start()

    # ----------------------------------------------------------------------------- hot path (memory only)
    def remote_trip(self, trace_id: int) -> TripRecord | None:
        """A trip heard from elsewhere for this trace, handed over once (the breaker then latches it)."""
        self._touched.add(trace_id)
        if not self._trips and (self.fleet is None or not self.fleet.over):
            return None
        with self._lock:
            record = self._trips.pop(trace_id, None)
            if record is None and self.fleet is not None and self.fleet.over:
                record = self.fleet.trip_for(trace_id, self._fleet_of(trace_id))
                if record is not None:
                    record.remote = True
            return record

    def _fleet_of(self, trace_id: int) -> str:
        """Called with the lock held."""
        book = self._books.get(trace_id)
        if book is not None and book.fleet is not None:
            return book.fleet
        assert self.fleet is not None
        return fleet_value(self.processor.engine.trace(trace_id), self.fleet.attribute)

    def _book(self, trace_id: int, owner: Any) -> _Book:
        """The trace's book (lock held): new, or a trace id seen again after its trace ended here."""
        book = self._books.get(trace_id)
        if book is None:
            book = self._books[trace_id] = self._ended.pop(trace_id) if trace_id in self._ended else _Book(owner)
        if book.owner is not owner:
            book.owner, book.sent = owner, [0, 0, 0, 0]
            book.streaks = None
        return book

    def add_usage(self, trace_id: int, tokens: int, model_calls: int, tool_calls: int, cost_usd: float) -> None:
        owner = self.processor.engine.trace(trace_id)
        nano = round((cost_usd or 0.0) * NANO_USD)
        with self._lock:
            book = self._book(trace_id, owner)
            pending = book.pending
            pending[0] += int(tokens or 0)
            pending[1] += int(model_calls or 0)
            pending[2] += int(tool_calls or 0)
            pending[3] += nano
            if self.fleet is not None:
                if book.fleet is None:
                    book.fleet = fleet_value(owner, self.fleet.attribute)
                self.fleet.add(book.fleet, int(tokens or 0), nano)

    def tool_started(self, trace_id: int, agent: str, call: ToolCall, attributes: Mapping[str, Any]) -> None:
        """Key a call whose arguments are recorded (at its start, or at its end when they came only then) and
        say how many identical calls with identical results the trace made before it, in every process, with
        nothing changed since (``call.shared_repeats``, read by ``tool_repeat``). Memory only."""
        key = call.shared_key = calls.call_key(agent, call, attributes, self._volatile_keys, self._cap)
        book = self._books.get(trace_id)
        read = book.streaks if book is not None and not self._degraded else None  # stale while Redis is down
        if read is not None and book is not None and read[0] == book.changes:  # no change here since the read
            call.shared_repeats = read[1].get(key, 0)

    def tool_ended(self, trace_id: int, agent: str, call: ToolCall, attributes: Mapping[str, Any],
                   changed: bool, counted: bool) -> None:
        """Queue what a finished call showed for the shared ledger. ``changed``: it changed something in this
        process's view; ``counted``: it was a new decision (not an identical call within one model turn)."""
        if call.keyed_at_end:
            self.tool_started(trace_id, agent, call, attributes)
        known = call.args_known and call.result_known and call.shared_key != 0
        observation = ((f"{call.shared_key:016x}", calls.result_digest(call, self._cap), "1" if counted else "0")
                       if known else (calls.CHANGE, "-", "-"))
        owner = self.processor.engine.trace(trace_id)
        with self._lock:
            book = self._book(trace_id, owner)
            if changed:
                book.changes += 1
            if len(book.calls) >= 3 * calls.MAX_PENDING:
                book.calls.clear()
                book.lost = True
            book.calls.extend(observation)
            if known:
                watch = book.watch
                watch.pop(call.shared_key, None)
                watch[call.shared_key] = None
                if len(watch) > calls.WATCHED:
                    del watch[next(iter(watch))]

    def inherited_chain(self) -> tuple[str, ...]:
        """Agents of the remote caller, from the request's context (see :mod:`.propagation`)."""
        return inherited_chain()

    @quiet
    def publish_trip(self, trace_id: int, record: TripRecord) -> None:
        """Publish at once (bounded by ``TRIP_TIMEOUT_S``, skipped while Redis is known to be down).

        Trips are rare and the call that tripped is being stopped anyway; publishing before it returns means the
        answer a stopped callee sends back to its caller cannot overtake the trip. Otherwise the flusher sends it.
        """
        trip_id = uuid.uuid4().hex
        payload = encode_trip(record, self.origin, trip_id)
        with self._lock:
            self._delivered[trace_id] = trip_id
            self.stats.trips_published += 1
        if not self._degraded:
            try:
                if self._trip_client is None:
                    self._trip_client = make_client(self.url, TRIP_TIMEOUT_S)
                pipe = self._trip_client.pipeline(transaction=False)
                key = trace_key(self.prefix, trace_id)
                pipe.hset(key, "trip", payload)
                pipe.expire(key, self.ttl_s)
                pipe.publish(self.channel, payload)
                pipe.execute()
                return
            except Exception as exc:
                self._failed(exc)
        with self._lock:
            self._ops.append(("trip", trace_id, payload))
        self._wake.set()

    def reset(self, trace_id: int) -> None:
        owner = self.processor.engine.trace(trace_id)
        with self._lock:
            self._trips.pop(trace_id, None)
            book = self._book(trace_id, owner)  # the loop is forgiven everywhere: every streak starts afresh
            book.calls.extend((calls.CHANGE, "-", "-"))
            book.changes += 1
            if getattr(self._local, "applying", False):
                return  # a reset heard from elsewhere: do not echo it back
            self._ops.append(("reset", trace_id, json.dumps({"op": "reset", "trace": trace_hex(trace_id),
                                                             "origin": self.origin})))
        self._wake.set()

    def close(self, timeout_s: float = 1.0) -> None:
        """Stop the threads after one last flush attempt (bounded by the socket timeout)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._wake.set()
        self._flusher.join(timeout_s + SOCKET_TIMEOUT_S)
        self._subscriber.join(timeout_s)
        with contextlib.suppress(Exception):
            self._client.close()
            if self._trip_client is not None:
                self._trip_client.close()

    def flush(self, timeout_s: float = 2.0) -> bool:
        """Wait until what was added so far reached Redis (tests, shutdown). False when Redis did not answer."""
        target = self.stats.flushes + 2
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._wake.set()
            if self.stats.flushes >= target:
                return True
            time.sleep(0.005)
        return False

    # ------------------------------------------------------------------------------------ flusher thread
    def _flush_loop(self) -> None:
        while True:
            self._wake.wait(self.staleness_s)
            self._wake.clear()
            stopping = self._stop.is_set()
            try:
                self._cycle()
            except Exception as exc:  # never let the thread die: the next cycle retries
                self._failed(exc)
            self.stats.cycles += 1
            if stopping:
                return

    def _cycle(self) -> None:
        processor = self.processor
        self._settle()
        if self._degraded:
            try:  # one cheap probe per cycle while down; the queued writes go once it answers
                self._client.ping()
            except Exception as exc:
                self._failed(exc)
                return
        with self._lock:
            ops, self._ops = self._ops, []
            if self._inflight is None:
                batch: list[_Batch] = []
                for tid, book in (*self._books.items(), *self._ended.items()):
                    if any(book.pending) or book.calls or book.lost:
                        delta = book.pending
                        book.pending = [0, 0, 0, 0]
                        book.sent = [a + b for a, b in zip(book.sent, delta, strict=True)]
                        book.total = [a + b for a, b in zip(book.total, delta, strict=True)]
                        batch.append(_Batch(tid, delta, list(book.total), book.lost, book.calls))
                        book.calls, book.lost, book.taken_changes = [], False, book.changes
                self._ended.clear()  # all taken: the batch carries what they still had to send
                if batch:
                    self._seq += 1
                    self._inflight = (self._seq, batch)
            inflight = self._inflight
            fleet_batch = self.fleet.take() if self.fleet is not None else {}
        live = processor.engine.live_trace_ids(MAX_PULL)
        touched, self._touched = self._touched, set()
        pipe = self._client.pipeline(transaction=False)
        for op, tid, payload in ops:
            key = trace_key(self.prefix, tid)
            if op == "trip":
                pipe.hset(key, "trip", payload)
                pipe.expire(key, self.ttl_s)
            else:
                pipe.hdel(key, "trip")
            pipe.publish(self.channel, payload)
        written: set[int] = set()
        if inflight is not None:
            seq, batch = inflight
            for entry in batch:
                self._script(keys=[trace_key(self.prefix, entry.tid)],
                             args=[self.origin, seq, self.ttl_s, *entry.delta, *entry.total,
                                   "1" if entry.lost else "0", calls.MAX_FIELDS, *entry.calls], client=pipe)
                written.add(entry.tid)
        idle = [tid for tid in live if tid not in written and tid not in touched]
        reads = [tid for tid in live if tid not in written and tid in touched]
        refresh = time.monotonic() - self._refreshed_at >= self.ttl_s / 3
        if refresh:  # a trace still live here keeps its shared hash, even while this process adds nothing
            self._refreshed_at = time.monotonic()
            for tid in reads + idle:
                pipe.expire(trace_key(self.prefix, tid), self.ttl_s)
        for tid in reads:
            pipe.hmget(trace_key(self.prefix, tid), *_FIELDS)
        fleets = self.fleet.queue(pipe, fleet_batch) if self.fleet is not None else []
        watched = self._watched((*written, *reads))
        for tid, _, keys in watched:
            pipe.hmget(trace_key(self.prefix, tid), "q", *[calls.field(key) for key in keys])
        try:
            results = pipe.execute(raise_on_error=True)
        except Exception as exc:
            self._touched |= touched
            with self._lock:
                self._ops[:0] = ops
                if self.fleet is not None:
                    self.fleet.restore(fleet_batch)
            self._failed(exc)
            return
        if watched:
            streak_answers = results[len(results) - len(watched):]
            results = results[:len(results) - len(watched)]
            self._read_streaks(watched, streak_answers)
        if fleets:
            fleet_answers = results[len(results) - 4 * len(fleets):]
            results = results[:len(results) - 4 * len(fleets)]
            with self._lock:
                for index, fleet in enumerate(fleets):
                    self.fleet.apply(fleet, fleet_answers[4 * index + 3])  # type: ignore[union-attr]
        with self._lock:
            self._inflight = None
        self._succeeded()
        first_script = len(results) - len(written) - len(reads) - (len(reads) + len(idle) if refresh else 0)
        answers = results[first_script:first_script + len(written)] + (results[-len(reads):] if reads else [])
        tids = ([entry.tid for entry in inflight[1]] if inflight is not None else []) + reads
        for tid, answer in zip(tids, answers, strict=True):
            self._apply(tid, answer)

    def _watched(self, tids: tuple[int, ...]) -> list[tuple[int, int, list[int]]]:
        """Per trace flushed or read this cycle, and per trace where a call is repeating (a shared streak of 2 or
        more: re-read every cycle, so the call after the model's turn meets the other processes' latest calls):
        the changes the read will answer for, and the keys of the calls made here lately (:mod:`.calls`)."""
        with self._lock:
            self._repeating &= self._books.keys()
            return [(tid, book.taken_changes, list(book.watch)) for tid in dict.fromkeys((*tids, *self._repeating))
                    if (book := self._books.get(tid)) is not None and book.watch]

    def _read_streaks(self, watched: list[tuple[int, int, list[int]]], answers: list[Any]) -> None:
        with self._lock:
            for (tid, taken, keys), answer in zip(watched, answers, strict=True):
                book = self._books.get(tid)
                if book is not None:
                    book.streaks = (taken, calls.streaks(keys, answer))
                    if any(streak >= 2 for streak in book.streaks[1].values()):
                        self._repeating.add(tid)
                    else:
                        self._repeating.discard(tid)

    def _apply(self, tid: int, answer: list[Any]) -> None:
        """Turn the shared totals of a trace into the others' share, and pick up a trip we have not seen."""
        trace = self.processor.engine.trace(tid)
        shared = [int(v) if v is not None else 0 for v in answer[:4]]
        with self._lock:
            book = self._books.get(tid)
            mine = book.sent if book is not None and book.owner is trace else [0, 0, 0, 0]
            others = [max(0, a - b) for a, b in zip(shared, mine, strict=True)]
            trip = answer[4]
            if trip is not None:
                self._heard(tid, trip, from_pull=True)
        if trace is not None:
            trace.remote = Totals(others[0], others[1], others[2], others[3] / NANO_USD)

    def _settle(self) -> None:
        """Let go of ended traces, keep the outage backlog within ``MAX_BACKLOG``.

        Runs every cycle, whether Redis answers or not. A book whose trace ended is deleted, or, if some of its
        usage is still unsent, moved to ``_ended`` without the trace's state (only its figures wait)."""
        live = self.processor.engine.trace
        dropped = 0
        with self._lock:
            for tid, book in list(self._books.items()):
                if book.owner is not None and live(tid) is book.owner:
                    continue
                del self._books[tid]
                if any(book.pending) or book.calls or book.lost:
                    book.owner, book.watch, book.streaks = None, {}, None  # nothing more is decided here
                    if self._degraded and book.calls:  # an outage keeps a few figures per ended trace, not its calls
                        book.calls, book.lost = [], True
                    self._ended[tid] = book
            while len(self._ended) > MAX_BACKLOG:
                self._ended.popitem(last=False)
                dropped += 1
            if len(self._ops) > MAX_BACKLOG:
                dropped += len(self._ops) - MAX_BACKLOG
                del self._ops[:len(self._ops) - MAX_BACKLOG]
            for tid in [t for t in self._delivered if live(t) is None and t not in self._trips]:
                del self._delivered[tid]
        if len(self._touched) > self.processor.engine.live_count():  # touched while down by traces ended since
            self._touched = {tid for tid in list(self._touched) if live(tid) is not None}
        if dropped:
            self._dropped(dropped)

    def _dropped(self, count: int) -> None:
        self.stats.backlog_dropped += count
        self.processor.stats.state_errors += count
        with contextlib.suppress(Exception):
            self._error_metric.add(count, {"error.type": "BacklogFull"})
        if not self._overflowed:
            self._overflowed = True
            logger.warning("spanbreaker: shared state at %s still unavailable and its backlog is full (%d ended "
                           "traces or trip messages); dropping the oldest (counted in stats.state_errors)",
                           _redact(self.url), MAX_BACKLOG)

    # --------------------------------------------------------------------------------- subscriber thread
    def _subscribe_loop(self) -> None:
        backoff = self.staleness_s
        while not self._stop.is_set():
            pubsub = None
            try:
                pubsub = self._client.pubsub(ignore_subscribe_messages=True)
                pubsub.subscribe(self.channel)
                backoff = self.staleness_s
                while not self._stop.is_set():
                    message = pubsub.get_message(timeout=0.2)
                    if message is not None and message.get("type") == "message":
                        self._on_message(message.get("data"))
            except Exception as exc:
                self._failed(exc)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 2.0)
            finally:
                if pubsub is not None:
                    with contextlib.suppress(Exception):
                        pubsub.close()

    def _on_message(self, data: Any) -> None:
        try:
            payload = json.loads(data)
            tid = int(payload["trace"], 16)
        except (TypeError, ValueError, KeyError):
            return
        if payload.get("origin") == self.origin:
            return
        if payload.get("op") == "reset":
            self.stats.resets_received += 1
            with self._lock:
                # The reset trip stays in _delivered: a pull that read the trace before the reset cleared it
                # must not hand the same trip over again (a later trip has a new id and is delivered).
                self._trips.pop(tid, None)
            if self.processor.engine.trace(tid) is not None:
                self._local.applying = True
                try:
                    self.processor.reset(tid)
                finally:
                    self._local.applying = False
            return
        with self._lock:
            self._heard(tid, data, from_pull=False)

    def _heard(self, tid: int, data: Any, *, from_pull: bool) -> None:
        """Record a trip published elsewhere (called with the lock held)."""
        try:
            payload = json.loads(data)
        except (TypeError, ValueError):
            return
        trip_id = str(payload.get("id", ""))
        if payload.get("origin") == self.origin or self._delivered.get(tid) == trip_id:
            return
        record = decode_record(payload)
        record.remote = True
        self._delivered[tid] = trip_id
        self._trips[tid] = record
        self.stats.trips_received += 1
        if len(self._trips) > MAX_REMOTE_TRIPS:
            self._trips.popitem(last=False)

    # ------------------------------------------------------------------------------------------ health
    def _failed(self, exc: BaseException) -> None:
        self.stats.errors += 1
        self.processor.stats.state_errors += 1
        with contextlib.suppress(Exception):
            self._error_metric.add(1, {"error.type": type(exc).__name__})
        if not self._degraded:
            self._degraded = True
            self.stats.outages += 1
            now = time.monotonic()
            quiet = now - self._warned_at < WARN_EVERY_S
            self._warned_at = now
            (logger.info if quiet else logger.warning)(
                "spanbreaker: shared state at %s unavailable (%s); using the local view until it is back",
                _redact(self.url), type(exc).__name__)

    def _succeeded(self) -> None:
        self.stats.flushes += 1
        self._overflowed = False
        if self._degraded:
            self._degraded = False
            logger.info("spanbreaker: shared state at %s is back", _redact(self.url))

    @property
    def degraded(self) -> bool:
        return self._degraded


class _ForcedTripPublisher:
    """Publishes ``processor.force_open`` (the in-code kill switch) so every process sees it."""

    def __init__(self, shared: RedisSharedState) -> None:
        self.shared = shared

    def on_trip(self, record: TripRecord) -> None:
        if record.detector == "forced" and not record.remote:
            self.shared.publish_trip(int(record.trace_id, 16), record)

    def on_state_change(self, trace_id: str, old: Any, new: Any) -> None:
        return None


def _error_counter() -> Any:
    """``spanbreaker.state.errors`` on the global meter provider (a no-op without an SDK)."""
    from opentelemetry import metrics

    return metrics.get_meter("spanbreaker.state").create_counter(
        "spanbreaker.state.errors", unit="{error}",
        description="Shared-state (Redis) operations that failed or timed out; the local view was used")


def _redact(url: str) -> str:
    """The URL without its password, for logs."""
    if "@" not in url:
        return url
    scheme, _, rest = url.partition("://")
    return f"{scheme}://***@{rest.rpartition('@')[2]}"
