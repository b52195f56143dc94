"""Replay throughput in spans per second, split into its parts.

Figures are CPU seconds of this process (``time.process_time``), best of ``--repeat``: on a shared machine wall
time measures the neighbours; wall time is printed beside them.

Why split: a user replaying a month of traces wants to know what bounds the run. Reading (gunzip + JSON +
OTLP decoding) is timed alone; the feed is timed twice over the same in-memory traces, through the bare SDK and
through the SDK with the breaker, so the breaker's share is visible. The end-to-end figure is what
``spanbreaker replay`` achieves.

    python benchmarks/replay_throughput.py [PATH ...] [--repeat 3]

PATH defaults to ``$SPANBREAKER_SWEBENCH_DATA`` or ``../shared/data/`` next to the repository.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
from pathlib import Path

import spanbreaker
from spanbreaker.replay import Feeder, Problem, replay
from spanbreaker.replay.readers import RecordedTrace, read_traces
from spanbreaker.replay.runner import replay_trace

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


class Clock:
    """CPU and wall time of one measured block."""

    def __enter__(self) -> Clock:
        self.cpu0, self.wall0 = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cpu = time.process_time() - self.cpu0
        self.wall = time.perf_counter() - self.wall0


def _best(clocks: list[Clock]) -> Clock:
    return min(clocks, key=lambda c: c.cpu)


def _feed(traces: list[RecordedTrace]) -> Clock:
    feeder = Feeder(spanbreaker.BreakerConfig())
    gc.collect()
    with Clock() as clock:
        for trace in traces:
            replay_trace(trace, feeder)
    feeder.shutdown()
    return clock


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is reported")
    args = parser.parse_args(argv)
    paths = args.paths or [os.environ.get("SPANBREAKER_SWEBENCH_DATA") or str(DEFAULT_DATA)]
    problems: list[Problem] = []

    read_times = []
    traces: list[RecordedTrace] = []
    for _ in range(args.repeat):
        with Clock() as clock:
            traces = list(read_traces(paths, problems.append))
        read_times.append(clock)
    spans = sum(len(t.spans) for t in traces)
    full = _best([_feed(traces) for _ in range(args.repeat)])
    read = _best(read_times)
    end_to_end = []
    count = 0
    for _ in range(args.repeat):
        with Clock() as clock:
            count = sum(1 for _ in replay(paths))
        end_to_end.append(clock)
    e2e = _best(end_to_end)

    def line(label: str, c: Clock, extra: str = "") -> None:
        print(f"{label:<48} {c.cpu:7.2f} s CPU {spans / c.cpu:>9,.0f} spans/s   (wall {c.wall:6.2f} s){extra}")

    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; "
          f"{len(traces)} traces, {spans:,} spans; best of {args.repeat}")
    line("read (gunzip + JSON + OTLP decode)", read)
    line("feed the engine (observe) + verdict", full)
    line("end to end (replay(), what the CLI runs)", e2e, f", {count} traces")
    for problem in problems[:10]:
        print(f"input problem: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
