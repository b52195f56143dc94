"""Variants of a measurement, each in a fresh process, alternated round by round: a machine that slows down for a
while slows every variant of that round alike, and the ratio of an "on" to its "off" in the same round keeps its
value while either figure alone would move."""

from __future__ import annotations

import statistics
import subprocess
import sys
from collections.abc import Mapping, Sequence


def alternate(child: str, variants: Sequence[tuple[str, ...]], rounds: int, extra: Sequence[str],
              env: Mapping[str, str]) -> dict[tuple[str, ...], list[float]]:
    """``python -c child *variant *extra`` for each variant, ``rounds`` times over; the figure each run prints last,
    per variant."""
    times: dict[tuple[str, ...], list[float]] = {variant: [] for variant in variants}
    for _ in range(rounds):
        for variant in variants:
            done = subprocess.run([sys.executable, "-c", child, *variant, *extra], capture_output=True, text=True,
                                  check=True, env=dict(env))
            times[variant].append(float(done.stdout.strip().splitlines()[-1]))
    return times


def compare(off: list[float], on: list[float]) -> tuple[float, float, float, float, float, float]:
    """(median off, median on, added, median ratio, lowest ratio, highest ratio), ratios taken round by round."""
    ratios = [b / a for a, b in zip(off, on, strict=True)]
    low, high = statistics.median(off), statistics.median(on)
    return low, high, high - low, statistics.median(ratios), min(ratios), max(ratios)
