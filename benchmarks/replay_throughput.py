"""Replay throughput in spans per second, and as a ratio to parsing alone, measured in the same run.

Parse-only is the floor any replay pays: gunzip every line (with the gzip reader replay uses) and decode it with
orjson (what the reader uses), nothing else. Then the reader alone (parse + OTLP decoding into recorded spans), and
end to end (``replay()``: read, feed the breaker engine, build each verdict): as the library runs it, then as
``spanbreaker replay`` runs it (the heap set up before the replay frozen, ``gc.freeze``) in one process and with
``--jobs``. Figures are CPU seconds (``time.process_time``, plus the workers' CPU for ``--jobs``; the figure to
trust on a shared machine) and wall seconds (what a user waits; the load average is printed beside), best of
``--repeat``. ``--split N`` first writes the input's lines into N gzip files of about equal size in a temporary
folder and measures those: an archive as the Collector's file exporter rotates it, which ``--jobs`` shares out by
file (each worker gunzips only its own files) where one file is split by trace id (every worker gunzips all of it).

    python benchmarks/replay_throughput.py [PATH ...] [--repeat 3] [--jobs 2] [--split 4]

PATH defaults to ``$SPANBREAKER_SWEBENCH_DATA`` or ``../shared/data/`` next to the repository. Runs against a
tree without ``--jobs`` (an older checkout, for a before/after figure) skip that line.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import gzip
import inspect
import json
import os
import platform
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from spanbreaker.replay import Problem, replay
from spanbreaker.replay.readers import expand_paths, read_traces

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Clock:
    """CPU (this process and its finished children) and wall time of one measured block."""

    def __enter__(self) -> Clock:
        gc.collect()
        self.cpu0, self.child0, self.wall0 = time.process_time(), _children_cpu(), time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cpu = time.process_time() - self.cpu0 + _children_cpu() - self.child0
        self.wall = time.perf_counter() - self.wall0


def best(block: Callable[[], object], repeat: int) -> Clock:
    clocks = []
    for _ in range(repeat):
        with Clock() as clock:
            block()
        clocks.append(clock)
    return min(clocks, key=lambda c: c.cpu)


try:  # the gzip reader replay uses (ISA-L's where installed); a tree from before it had the standard library's
    from spanbreaker.replay.gunzip import open_gzip
except ImportError:
    def open_gzip(raw: Any) -> gzip.GzipFile:
        return gzip.GzipFile(fileobj=raw)


def parse_only(files: list[Path], loads: Callable[[bytes], object],
               opener: Callable[[Any], Any] = open_gzip) -> None:
    """Gunzip (with ``opener``) and decode every line: the floor any replay of ``files`` pays."""
    for path in files:
        with path.open("rb") as raw:
            gzipped = raw.peek(2)[:2] == b"\x1f\x8b"
            with opener(raw) if gzipped else contextlib.nullcontext(raw) as fh:
                for line in fh:
                    loads(line)


def as_cli(block: Callable[[], object]) -> object:
    """``block`` with the heap set up so far frozen (``gc.freeze``), as ``spanbreaker replay`` runs a replay."""
    gc.freeze()
    try:
        return block()
    finally:
        gc.unfreeze()


def split(files: list[Path], parts: int, folder: Path) -> list[Path]:
    """The lines of ``files`` written into ``parts`` gzip files of about equal size (consecutive lines, so a trace
    whose spans are on several consecutive lines may be split over two files: the reader reads it as two
    fragments, in any number of jobs alike)."""
    lines: list[bytes] = []
    for path in files:
        with path.open("rb") as raw:
            gzipped = raw.peek(2)[:2] == b"\x1f\x8b"
            with gzip.GzipFile(fileobj=raw) if gzipped else contextlib.nullcontext(raw) as fh:
                lines.extend(line if line.endswith(b"\n") else line + b"\n" for line in fh)
    total, out, start = sum(map(len, lines)), [], 0
    for part in range(parts):
        end, size = start, 0
        while end < len(lines) and (size < total / parts or part == parts - 1):
            size += len(lines[end])
            end += 1
        path = folder / f"part{part}.otlp.jsonl.gz"
        with gzip.open(path, "wb", compresslevel=6) as fh:
            fh.writelines(lines[start:end])
        out.append(path)
        start = end
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best (by CPU) is reported")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes for the --jobs line")
    parser.add_argument("--split", type=int, default=0, metavar="N",
                        help="measure the input's lines written into N gzip files (a rotated archive)")
    args = parser.parse_args(argv)
    paths = args.paths or [os.environ.get("SPANBREAKER_SWEBENCH_DATA") or str(DEFAULT_DATA)]
    problems: list[Problem] = []
    files = expand_paths(paths, problems.append)
    with tempfile.TemporaryDirectory() as folder:
        if args.split > 0:
            files = split(files, args.split, Path(folder))
        return measure(files, args, problems)


def measure(files: list[Path], args: argparse.Namespace, problems: list[Problem]) -> int:
    spans = sum(len(t.spans) for t in read_traces(files, problems.append))
    traces = sum(1 for _ in read_traces(files, problems.append))

    parse = best(lambda: parse_only(files, orjson.loads), args.repeat)
    parse_json = best(lambda: parse_only(files, json.loads), args.repeat)
    parse_zlib = best(lambda: parse_only(files, orjson.loads, lambda raw: gzip.GzipFile(fileobj=raw)), args.repeat)
    read = best(lambda: sum(1 for _ in read_traces(files, problems.append)), args.repeat)
    one = best(lambda: sum(1 for _ in replay(files)), args.repeat)
    one_cli = best(lambda: as_cli(lambda: sum(1 for _ in replay(files))), args.repeat)
    jobs = None
    if "jobs" in inspect.signature(replay).parameters:
        jobs = best(lambda: as_cli(lambda: sum(1 for _ in replay(files, jobs=args.jobs))), args.repeat)

    def line(label: str, c: Clock) -> None:
        print(f"{label:<44} CPU {c.cpu:6.2f} s {spans / c.cpu:>9,.0f} spans/s {c.cpu / parse.cpu:5.2f}x parse | "
              f"wall {c.wall:6.2f} s {spans / c.wall:>9,.0f} spans/s {c.wall / parse.wall:5.2f}x parse")

    shape = f"{len(files)} files" if len(files) > 1 else "1 file"
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}; {traces} traces, {spans:,} spans in {shape}; best of "
          f"{args.repeat}")
    line("parse only (gunzip + orjson.loads)", parse)
    line("  for reference: gunzip + json.loads", parse_json)
    line("  for reference: zlib's gunzip + orjson", parse_zlib)
    line("read (parse + OTLP decode)", read)
    line("replay() end to end, 1 process", one)
    line("  as the CLI runs it (heap frozen)", one_cli)
    if jobs is not None:
        line(f"  the same, --jobs {args.jobs} (all processes)", jobs)
    for problem in problems[:10]:
        print(f"input problem: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
