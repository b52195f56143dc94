"""The fleet rule: a spend cap per resource attribute value (``service.name`` by default) over a time window,
across every trace and every process sharing the state.

Why here and not in a detector: no single trace sees the fleet's spend. Each process adds its traces' tokens and
cost to one Redis hash per fleet value and fixed window (``<prefix>:fleet:<attr>=<value>:<window start>``) at
every flush and reads the total back; once the total is over the cap, every trace of that fleet in every process
trips at its next model, tool or agent call, with the same semantics as any trip (detector ``fleet_budget``).
The window is fixed (aligned to the epoch): the cap applies afresh from the next boundary. Increments are at
least once: a flush that timed out after Redis applied it is sent again, so a Redis stall can over-count (trip
early), never under-count.
"""

from __future__ import annotations

import time
from typing import Any

from ..breaker import TripRecord

NANO_USD = 1_000_000_000
UNKNOWN = "unknown"
MAX_TRIPPED = 100_000


def fleet_value(trace: Any, attribute: str) -> str:
    """The fleet a trace belongs to: the resource attribute of any of its open spans (one provider per process)."""
    if trace is None:
        return UNKNOWN
    for entry in list(trace.open.values())[:4]:
        resource = getattr(entry.handle, "resource", None)  # the façade's SDK span
        attributes = getattr(resource, "attributes", None) or {}
        value = attributes.get(attribute)
        if value is not None:
            return str(value)
    return UNKNOWN


class FleetRule:
    """Pending spend per fleet value, the totals read back, and which fleets are over their cap."""

    def __init__(self, config: Any, prefix: str) -> None:
        self.attribute: str = config.fleet_attribute
        self.max_tokens: int = config.fleet_max_tokens
        self.max_nano: int = round(config.fleet_max_cost_usd * NANO_USD)
        self.window_s: float = config.fleet_window_s
        self.prefix = prefix
        self.pending: dict[str, list[int]] = {}
        self.over: dict[str, TripRecord] = {}
        self.tripped: set[int] = set()

    @staticmethod
    def enabled(config: Any) -> bool:
        return bool(config.fleet_max_tokens > 0 or config.fleet_max_cost_usd > 0)

    def add(self, fleet: str, tokens: int, nano: int) -> None:
        """Called with the shared state's lock held."""
        row = self.pending.setdefault(fleet, [0, 0])
        row[0] += tokens
        row[1] += nano

    def take(self) -> dict[str, list[int]]:
        """The spend to send now (lock held); fleets seen before are read even with nothing to add."""
        batch = {fleet: row for fleet, row in self.pending.items()}
        self.pending = {fleet: [0, 0] for fleet in batch}
        return batch

    def restore(self, batch: dict[str, list[int]]) -> None:
        """A flush failed: add its spend back (lock held)."""
        for fleet, (tokens, nano) in batch.items():
            self.add(fleet, tokens, nano)

    def key(self, fleet: str, now: float | None = None) -> str:
        window = int((time.time() if now is None else now) // self.window_s)
        return f"{self.prefix}:fleet:{self.attribute}={fleet}:{window * int(self.window_s)}"

    def queue(self, pipe: Any, batch: dict[str, list[int]]) -> list[str]:
        """Add the increments and read-backs to a pipeline: 4 commands per fleet, in ``batch`` order."""
        ttl = max(1, round(self.window_s * 2))
        for fleet, (tokens, nano) in batch.items():
            key = self.key(fleet)
            pipe.hincrby(key, "t", tokens)
            pipe.hincrby(key, "n", nano)
            pipe.expire(key, ttl)
            pipe.hmget(key, "t", "n")
        return list(batch)

    def apply(self, fleet: str, answer: list[Any]) -> None:
        """Judge a fleet's window total (lock held)."""
        tokens, nano = (int(v) if v is not None else 0 for v in answer)
        reason = None
        if self.max_tokens and tokens > self.max_tokens:
            reason = f"{self.attribute}={fleet} spent {tokens} tokens in this window, fleet cap {self.max_tokens}"
        elif self.max_nano and nano > self.max_nano:
            reason = (f"{self.attribute}={fleet} spent ${nano / NANO_USD:.4f} in this window, "
                      f"fleet cap ${self.max_nano / NANO_USD:.4f}")
        if reason is None:
            self.over.pop(fleet, None)
            return
        if fleet not in self.over:
            self.over[fleet] = TripRecord("fleet_budget", reason, "", evidence={
                "fleet_attribute": self.attribute, "fleet": fleet, "tokens": tokens,
                "cost_usd": round(nano / NANO_USD, 6), "limit_tokens": self.max_tokens,
                "limit_usd": self.max_nano / NANO_USD, "window_s": self.window_s})

    def trip_for(self, trace_id: int, fleet: str) -> TripRecord | None:
        """The fleet trip for a trace, once per trace (lock held)."""
        over = self.over.get(fleet)
        if over is None or trace_id in self.tripped:
            return None
        if len(self.tripped) >= MAX_TRIPPED:
            self.tripped.clear()
        self.tripped.add(trace_id)
        return TripRecord(over.detector, over.reason, f"{trace_id:032x}", evidence=dict(over.evidence),
                          time_unix_nano=time.time_ns())
