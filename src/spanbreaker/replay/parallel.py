"""``--jobs N``: replay over N worker processes, verdicts merged back in input order.

Why each worker reads its share of the input itself rather than one reader handing traces out: traces are
independent, and decoding a span into Python objects costs more than gunzipping and parsing it, so no span crosses
a process boundary; only verdicts do. An archive of several files that share out evenly is split by file
(:func:`file_plan`): each worker reads only its own files. Otherwise (one file) every worker reads the whole input
and keeps its own part of the traces (:meth:`Shard.split`): it skips the other workers' lines before parsing them
(their trace ids read from the bytes) and their spans before decoding them.
A worker hands its verdicts on in the reader's order (:attr:`RecordedTrace.order`), which every worker computes
the same way, so merging the N ordered streams gives the order one process gives.

What a worker does not share with the others: a breaker's state that outlives a trace (a session's validation
failures counted over its runs, ``validation_failures``) is counted per worker, as it would be per service
instance; the pinned corpora's verdicts are the same with any number of jobs (``tests/replay/test_jobs.py``).
"""

from __future__ import annotations

import gc
import heapq
import multiprocessing
import queue
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..config import BreakerConfig
from ..pricing import wait_loaded
from .feed import Feeder, Marks
from .readers import expand_paths, file_size
from .recorded import Problem, RecordedSpan
from .shard import Shard

QUEUE_ITEMS = 256
"""Messages a worker may have waiting for the parent (bounds memory when one worker runs ahead)."""
PROGRESS_BYTES = 1024 * 1024
"""A worker reports its progress through the input at most once per this many bytes."""

Item = tuple[tuple[int, ...], list[Any], list[tuple[RecordedSpan, Marks | None]]]
"""(reader order, one verdict per configuration, the first configuration's spans with marks when kept)."""


def _work(paths: list[str], configs: list[BreakerConfig], shard: Shard, only_files: frozenset[int] | None,
          keep_spans: bool, out: Any) -> None:
    """One worker: replay the traces ``shard`` keeps; put ("trace", Item), ("problem", Problem),
    ("progress", bytes), then ("done", None) or ("error", text)."""
    from .runner import replay_many  # the worker's own import: the module imports this one

    gc.freeze()  # as the command froze its heap (replay/cli.py): a spawned worker's imports, a forked one's copy
    try:
        feeders = [Feeder(configs[0], keep_spans=keep_spans), *(Feeder(c) for c in configs[1:])]
        sent = [0]

        def progress(done: int, total: int) -> None:
            if done - sent[0] >= PROGRESS_BYTES or done == total:
                sent[0] = done
                out.put(("progress", done))

        def note(problem: Problem) -> None:
            out.put(("problem", problem))

        for results in replay_many(paths, feeders, on_problem=note, progress=progress, shard=shard,
                                   only_files=only_files):
            order = results[0].order
            out.put(("trace", (order, results, feeders[0].take_spans())))
        for feeder in feeders:
            feeder.shutdown()
        out.put(("done", None))
    except BaseException:  # a bug, not bad input (readers make that a problem): the parent reports it
        out.put(("error", traceback.format_exc(limit=8)))


BALANCE = 1.1
"""Whole files go to workers when the busiest worker's share is at most this many times an even share."""


def file_plan(files: Sequence[Path], jobs: int) -> list[frozenset[int]] | None:
    """Per worker, the positions of the files it reads whole; None when the files do not share out evenly.

    An archive of several files (the Collector's file exporter rotates them) is split by file: a worker then
    gunzips only its own files, where with the split by trace id every worker gunzips every file (about a tenth
    of a replay's work, done once per worker). The reader's traces never cross files, so no trace is split
    either way. Files are handed out largest first to the least loaded worker, by size on disk; when the
    busiest worker would still carry more than :data:`BALANCE` times an even share (one file, or a few of very
    different sizes), the split by trace id is the faster one and None says so."""
    sizes = [file_size(path) for path in files]
    total = sum(sizes)
    if len(files) < jobs or total == 0:
        return None
    loads = [0] * jobs
    owned: list[set[int]] = [set() for _ in range(jobs)]
    for index in sorted(range(len(files)), key=lambda i: -sizes[i]):
        job = loads.index(min(loads))
        loads[job] += sizes[index]
        owned[job].add(index)
    if max(loads) > BALANCE * total / jobs:
        return None
    return [frozenset(share) for share in owned]


def start_method() -> str:
    """``fork`` when this process runs no other thread, else ``spawn``.

    A forked worker starts with what the parent has imported (spanbreaker and the price table: ~0.6 s of CPU per
    spawned worker, a quarter of a worker's whole share of the 500-run file), and needs no re-import. But a fork
    copies only the forking thread: a lock another thread held at that moment (the import lock, a logging
    handler's, a progress bar's) stays held in the worker forever. So the price table's background load is
    waited for (the workers need it anyway), and any other live thread (a progress bar refreshing, an exporter,
    a test's server) means spawn, which costs the imports but shares no lock.
    """
    if "fork" not in multiprocessing.get_all_start_methods():
        return "spawn"
    wait_loaded(timeout=30.0)
    return "fork" if threading.active_count() == 1 else "spawn"


def replay_parallel(
    paths: Sequence[str | Path],
    configs: Sequence[BreakerConfig],
    jobs: int,
    shard: Shard | None,
    keep_spans: bool,
    note: Callable[[Problem], None],
    progress: Callable[[int, int], None] | None,
    total: int,
) -> Iterator[Item]:
    """The items of ``jobs`` workers, merged in the reader's order. Problems every worker meets (a bad file) are
    noted once. Workers are stopped when the caller stops early."""
    context: Any = multiprocessing.get_context(start_method())  # fork or spawn: both have Process and Queue
    outer = shard or Shard(0, 1)
    plan = file_plan(expand_paths(paths, lambda problem: None), jobs)
    queues = [context.Queue(QUEUE_ITEMS) for _ in range(jobs)]
    workers = [context.Process(target=_work, args=(
        [str(p) for p in paths], list(configs), outer.split(jobs, job) if plan is None else outer,
        None if plan is None else plan[job], keep_spans, queues[job]), daemon=True) for job in range(jobs)]
    for worker in workers:
        worker.start()
    seen: set[Problem] = set()
    done_bytes = [0] * jobs
    heads: list[tuple[tuple[int, ...], int, Item]] = []
    waiting = set(range(jobs))
    """Workers whose next item the merge needs before it can hand one on."""
    finished: set[int] = set()
    try:
        while waiting:
            job = min(waiting)
            try:
                kind, value = queues[job].get(timeout=1.0)
            except queue.Empty:
                if not workers[job].is_alive():
                    raise RuntimeError(f"replay worker {job + 1} of {jobs} ended without finishing "
                                       f"(exit code {workers[job].exitcode})") from None
                continue
            if kind == "trace":
                heapq.heappush(heads, (value[0], job, value))
                waiting.discard(job)
            elif kind == "problem":
                if value not in seen:
                    seen.add(value)
                    note(value)
            elif kind == "progress":
                done_bytes[job] = value
                if progress is not None:
                    progress(sum(done_bytes) // jobs if plan is None else sum(done_bytes), total)
            elif kind == "done":
                waiting.discard(job)
                finished.add(job)
            else:
                raise RuntimeError(f"replay worker {job + 1} of {jobs} failed:\n{value}")
            while not waiting and heads:
                _, job, item = heapq.heappop(heads)
                yield item
                if job not in finished:
                    waiting.add(job)
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
            worker.join(timeout=5)
        for q in queues:
            q.close()
            q.cancel_join_thread()

