"""``--shard K/N``: which traces of an archive this replay takes, by a stable hash of the trace id.

Why a hash of the trace id rather than a split by file or line: traces are independent, while files and lines
are not the unit (the Collector writes a trace's spans over several lines, a file can hold one huge trace).
The hash is BLAKE2b of the 16-byte id, so every machine, Python version and run agrees on the split, and ids
that are not random (sequential test ids) still spread evenly. ``--jobs`` splits each shard the same way over
worker processes (:meth:`Shard.split`), with the hash's higher digits, so the two compose.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

_CACHE = 65_536
"""Trace ids remembered per shard (a trace's spans come together; the cache only saves the hash per span)."""


def trace_hash(trace_id: int) -> int:
    """A stable 64-bit hash of a trace id."""
    return int.from_bytes(hashlib.blake2b(trace_id.to_bytes(16, "big"), digest_size=8).digest(), "big")


@dataclass
class Shard:
    """Shard ``index`` (0-based) of ``count``; ``within``: the shard this one splits further (``--jobs``)."""

    index: int
    count: int
    within: Shard | None = None
    _seen: dict[int, bool] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 0 <= self.index < self.count:
            raise ValueError(f"shard {self.index + 1} of {self.count} does not exist")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``K/N`` with 1 <= K <= N (as ``--shard 1/4`` .. ``--shard 4/4``); ValueError saying what is wrong."""
        head, sep, tail = text.partition("/")
        if not sep or not head.strip().isdigit() or not tail.strip().isdigit():
            raise ValueError(f"{text!r} is not K/N (two whole numbers, e.g. 1/4)")
        k, n = int(head), int(tail)
        if n < 1:
            raise ValueError(f"{text!r}: N must be at least 1")
        if not 1 <= k <= n:
            raise ValueError(f"{text!r}: K must be between 1 and N ({n})")
        return cls(k - 1, n)

    def split(self, jobs: int, job: int) -> Shard:
        """Part ``job`` of this shard split ``jobs`` ways."""
        return Shard(job, jobs, self)

    def _divisor(self) -> int:
        return self.within._divisor() * self.within.count if self.within is not None else 1

    def keeps(self, trace_id: int) -> bool:
        kept = self._seen.get(trace_id)
        if kept is None:
            if len(self._seen) >= _CACHE:
                self._seen.clear()
            h = trace_hash(trace_id)
            kept = self._seen[trace_id] = (h // self._divisor()) % self.count == self.index and (
                self.within is None or self.within.keeps(trace_id))
        return kept

    def __str__(self) -> str:
        return f"{self.index + 1}/{self.count}"
