"""``spanbreaker replay PATH... [--config FILE] [--sweep KEY=V1,V2...] [--json] [--html FILE] [--jobs N|auto]
[--shard K/N]``: backtest the breaker on recorded traces.

Why it is a separate command rather than a script: users tune thresholds on the traces they already have
before letting the breaker stop production runs; the command must read what their backends export and say
plainly what it skipped. Input defects go to stderr as ``file:line: message`` while the run goes on.
Exit status: 0 clean, 1 some input was skipped or cut, 2 usage error (bad arguments, bad config, no input).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from ..config import BreakerConfig
from ..errors import ConfigError
from .export import TraceWriter
from .feed import Feeder
from .html import render
from .readers import expand_paths, file_size
from .recorded import Problem
from .report import Summary, print_report, sweep_table
from .runner import TraceResult, replay_many
from .shard import Shard
from .sweep import Sweep

PROGRESS_FROM_BYTES = 1024 * 1024
"""Inputs at least this large get a progress bar (on a terminal)."""
REFRESH_S = 0.1
"""The progress bar's refresh interval (as rich's own refresh thread would)."""


def register(subparsers: Any) -> None:
    description = ("Replay recorded traces (OTLP/JSON, one request per line or per file; Jaeger JSON; plain or gzip) "
                   "through the breaker in observe mode and report where it would have tripped.")
    sub = subparsers.add_parser("replay", help="backtest the breaker on recorded traces", description=description)
    sub.add_argument("paths", nargs="+", metavar="PATH", help="trace files or directories of them")
    sub.add_argument("--config", metavar="FILE",
                     help="TOML thresholds (as for SPANBREAKER_CONFIG); default: environment, then defaults")
    sub.add_argument("--sweep", action="append", metavar="KEY=V1,V2,...",
                     help="also replay with each value of a numeric threshold, in the same pass; repeatable "
                          "(one key at a time from the base config, not a grid)")
    sub.add_argument("--json", action="store_true", help="one JSON object per trace on stdout")
    sub.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    sub.add_argument("--export", metavar="FILE",
                     help="write the replayed spans, with the trip marks, as OTLP/JSON lines (one trace a line)")
    sub.add_argument("--all", action="store_true", help="list every trace, not only the tripped ones")
    sub.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    sub.add_argument("--jobs", type=_jobs, default=1, metavar="N",
                     help="replay in N worker processes (traces are independent), or 'auto': one per CPU this "
                          "process may use; output in input order as with 1")
    sub.add_argument("--shard", type=_shard, metavar="K/N",
                     help="replay only shard K of N (1 <= K <= N), chosen by a stable hash of the trace id, so N "
                          "machines split one archive; their --json outputs together are the whole replay")
    sub.set_defaults(func=run)


def _jobs(text: str) -> int:
    """``--jobs``: a whole number from 1, or ``auto`` (argparse turns the error into exit status 2)."""
    if text.strip().lower() == "auto":
        return usable_cpus()
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of worker processes (1 or more, or auto)")
    return int(text)


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity where the platform has one (a container's or a batch job's
    cpuset), else the machine's count; at least 1."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return max(1, len(affinity(0)))
    return max(1, os.cpu_count() or 1)


def _shard(text: str) -> Shard:
    try:
        return Shard.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _config(path: str | None) -> BreakerConfig:
    if path:
        return BreakerConfig.from_toml(path).replace(mode="observe")
    return BreakerConfig.load().replace(mode="observe")


def run(args: argparse.Namespace) -> int:
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        config = _config(args.config)
        sweep = Sweep(config, args.sweep or ())
    except ConfigError as exc:
        err.print(f"spanbreaker replay: {exc}", markup=False)
        return 2
    missing = [p for p in args.paths if not Path(p).exists()]
    if len(missing) == len(args.paths):
        err.print(f"spanbreaker replay: no such file or directory: {', '.join(missing)}", markup=False)
        return 2
    problems: list[Problem] = []
    # a path that is missing or holds no trace files is reported once, as the replay reads it
    total_bytes = sum(file_size(path) for path in expand_paths(args.paths, lambda problem: None))
    show_progress = (not args.no_progress and err.is_terminal and total_bytes >= PROGRESS_FROM_BYTES)
    progress = Progress(TextColumn("replaying"), BarColumn(), DownloadColumn(),
                        TextColumn("{task.fields[traces]} traces"), TimeRemainingColumn(), console=err,
                        transient=True, disable=not show_progress, auto_refresh=False)
    # Refreshed from the replay's own progress calls, at most every REFRESH_S, rather than by rich's refresh
    # thread: with no other thread running, ``--jobs`` workers can be forked (replay/parallel.py).
    task = progress.add_task("replay", total=total_bytes or None, traces=0)
    refreshed = [0.0]

    def advance(done: int, total: int) -> None:
        now = time.monotonic()
        refresh = now - refreshed[0] >= REFRESH_S or done >= total
        if refresh:
            refreshed[0] = now
        progress.update(task, completed=done, total=total, refresh=refresh)

    def on_problem(problem: Problem) -> None:
        progress.console.print(f"spanbreaker replay: {problem}", markup=False, highlight=False)

    results: list[TraceResult] = []
    summary = Summary()
    out = sys.stdout
    exporter: TraceWriter | None = None
    export_file: IO[str] | None = None
    if args.export:
        try:
            export_file = open(args.export, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError as exc:
            err.print(f"spanbreaker replay: cannot write {args.export}: {exc}", markup=False)
            return 2
        exporter = TraceWriter(export_file)
    feeders = [Feeder(config, keep_spans=exporter is not None)]
    feeders += [Feeder(c) for c in sweep.configs[1:]]
    with progress, contextlib.ExitStack() as stack:
        for feeder in feeders:
            stack.callback(feeder.shutdown)
        if export_file is not None:
            stack.enter_context(export_file)
        # What is set up by now (the modules, the price table, the feeders) lives as long as the command: out of
        # the collector's view, full collections during a long replay walk only the replay's own objects (on the
        # 500-run SWE-bench file, collection time 0.16 -> 0.04 s of ~1.8 s), and forked ``--jobs`` workers leave
        # those pages shared rather than writing to them. Unfrozen when the replay ends (the command may run
        # inside another program: a test, a notebook); the library's replay() leaves its caller's heap alone.
        gc.freeze()
        stack.callback(gc.unfreeze)
        stream = replay_many(args.paths, feeders, problems=problems, on_problem=on_problem,
                             progress=advance,
                             jobs=args.jobs, shard=args.shard)
        for verdicts in _guarded(stream, args.paths, problems, on_problem):
            result = verdicts[0]
            if exporter is not None:
                exporter.write_trace(feeders[0].take_spans(), result.resource)
            summary.add(result)
            sweep.add(verdicts)
            if args.json:
                line = result.as_json()
                if sweep.rows:
                    line["sweep"] = sweep.verdicts(verdicts)
                out.write(json.dumps(line, separators=(",", ":")) + "\n")
                out.flush()
            if args.html or not args.json:
                results.append(result)
            progress.update(task, traces=summary.traces)
    if not args.json:
        print_report(_wide_console(), results, summary, problems, show_all=args.all, sweep=sweep.rows)
    if args.html:
        title = ", ".join(Path(p).name for p in args.paths)
        try:
            Path(args.html).write_text(render(results, summary, problems, title, sweep.rows), encoding="utf-8")
        except OSError as exc:
            err.print(f"spanbreaker replay: cannot write {args.html}: {exc}", markup=False)
            return 2
    if args.json:
        err.print(f"{summary.tripped} of {summary.traces} traces would have tripped"
                  + (f"; {len(problems)} input problem(s)" if problems else ""), markup=False)
        if sweep.rows:
            _wide_console(stderr=True).print(sweep_table(sweep.rows))
    return 1 if problems else 0


def _guarded(verdicts: Iterator[list[TraceResult]], paths: list[str], problems: list[Problem],
             on_problem: Callable[[Problem], None]) -> Iterator[list[TraceResult]]:
    """The verdicts, stopping at an exception rather than raising it: bad input never raises (the readers make
    it a problem), so one here is a bug in spanbreaker. It is reported like a problem, and the report of the
    traces replayed before it is still printed and written, with exit status 1."""
    try:
        yield from verdicts
    except Exception as exc:
        problem = Problem(", ".join(paths), 0, f"internal error, the rest is not replayed ({type(exc).__name__}: "
                                               f"{str(exc)[:200]}); please report this as a spanbreaker bug")
        problems.append(problem)
        on_problem(problem)


def _wide_console(stderr: bool = False) -> Console:
    """Wide enough for the verdict table when the stream is a file or pipe (rich would assume 80 columns)."""
    console = Console(highlight=False, stderr=stderr)
    if not console.is_terminal:
        console = Console(highlight=False, stderr=stderr, width=200)
    return console
