"""Identical calls across processes: the shared call ledger behind cross-process ``tool_repeat``.

Why: when one trace's agent steps run in several processes (a durable agent whose steps any worker picks up, a
tool service behind a load balancer), a loop is spread over them and no process alone sees enough identical
calls to trip. So each process sends, with the usage batch its flusher already sends (:mod:`.redis`), what its
tool calls were: a stable digest of (agent, tool, arguments), a digest of the result, and whether the call was a
new decision of the model (identical calls within one model turn count once, as in :mod:`spanbreaker.progress`).
The Lua script that applies the usage applies these observations to the trace's hash, in the order batches
reach Redis, with the rule of :mod:`spanbreaker.progress`: an identical call with an identical result extends
its streak while nothing changed since the streak began; a call never seen before, a different result, or a
call whose arguments or result were not recorded is a change. At every flush the process reads back the streaks
of the calls it made recently; ``tool_repeat`` compares the next call with that memory-only copy, so the hot path
never waits on Redis.

Where it errs, and which way:

* A change is trace-wide in the ledger (any agent, any process): a file edited by one service resets the
  streak of the tests another service runs. Conservative: fewer trips, never one across a change it was told of.
* Between processes, order is arrival order at Redis, late by up to one staleness window. The streaks read
  back are set aside at the first local change after the batch they answer was taken, so a stale streak never
  outlives an edit made here, and while Redis is down; a change made elsewhere since the last read (within a
  staleness window, or during this process's model call) can be seen one call late.
* A process only reads back calls it made itself (the last :data:`WATCHED` per trace), so the veto comes from the
  second identical call a process makes, at the latest; a loop alternating between two processes is caught one
  call later than in one process.
* The agent name is part of the key: a client-side TOOL span and the server-side span of the same remote call
  (different scopes) are not counted twice.

Digests are computed only when shared state is on (the default path keeps its per-process Python hashes). The
ledger's fields live in the trace's own hash (same key, same TTL, one key per trace for Redis Cluster); it holds at
most :data:`MAX_FIELDS` call fields, then starts afresh.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..conventions.read import args_fingerprint
from ..fingerprint import digest
from ..signals import ToolCall

WATCHED = 64
"""Recent call keys per trace whose shared streaks a process reads back at each flush."""
MAX_PENDING = 512
"""Observations per trace waiting for the next flush; beyond, they are dropped and the ledger told of a change."""
MAX_FIELDS = 4096
"""Call fields per trace in Redis; beyond, the ledger forgets them all (every streak starts afresh)."""
CHANGE = "0"
"""The observation for a call that changed something the ledger cannot see (arguments or result unrecorded)."""

LEDGER_LUA = """
local q = tonumber(redis.call('HGET', KEYS[1], 'q') or '0')
if ARGV[12] == '1' then q = q + 1 end
local kn = tonumber(redis.call('HGET', KEYS[1], 'kn') or '0')
if kn > tonumber(ARGV[13]) then
  local names = redis.call('HKEYS', KEYS[1])
  for _, name in ipairs(names) do
    if string.sub(name, 1, 2) == 'k:' then redis.call('HDEL', KEYS[1], name) end
  end
  kn = 0
  q = q + 1
end
for i = 14, #ARGV, 3 do
  local k = ARGV[i]
  if k == '0' then
    q = q + 1
  else
    local f = 'k:' .. k
    local v = redis.call('HGET', KEYS[1], f)
    local r, s, m
    if v then r, s, m = string.match(v, '^(%w+):(%d+):(%d+)$') end
    if r == ARGV[i + 1] and tonumber(m) == q then
      if ARGV[i + 2] == '1' then redis.call('HSET', KEYS[1], f, r .. ':' .. (tonumber(s) + 1) .. ':' .. m) end
    else
      if not r or r ~= ARGV[i + 1] then q = q + 1 end
      if not v then kn = kn + 1 end
      redis.call('HSET', KEYS[1], f, ARGV[i + 1] .. ':1:' .. q)
    end
  end
end
redis.call('HSET', KEYS[1], 'q', q, 'kn', kn)
"""
"""Apply a batch's call observations (runs inside the usage script, only when that batch is applied: exactly
once). ``q`` is the trace's change count; a call field is ``<result digest>:<streak>:<q when the streak began>``."""


def call_key(agent: str, call: ToolCall, attributes: Mapping[str, Any], volatile: frozenset[str],
             cap: int) -> int:
    """The stable key of (agent, tool, canonical arguments): the same in every process and every run."""
    return int(args_fingerprint(call.name, attributes, volatile, cap, agent), 16) or 1


def result_digest(call: ToolCall, cap: int) -> str:
    """A stable digest of what the call returned (its failure class included)."""
    return digest(f"{call.error or ''}\x1f{call.result_sample}", cap)


def field(key: int) -> str:
    return f"k:{key:016x}"


def streaks(keys: list[int], answer: list[Any]) -> dict[int, int]:
    """Shared streaks of ``keys`` from ``HMGET q k:... ``: a streak counts only while nothing changed since it
    began (its mark is the trace's current change count)."""
    current = answer[0]
    found: dict[int, int] = {}
    for key, value in zip(keys, answer[1:], strict=True):
        if value is None or current is None:
            continue
        _result, _, rest = (value.decode() if isinstance(value, bytes) else str(value)).partition(":")
        streak, _, mark = rest.partition(":")
        if mark == (current.decode() if isinstance(current, bytes) else str(current)) and streak.isdigit():
            found[key] = int(streak)
    return found
