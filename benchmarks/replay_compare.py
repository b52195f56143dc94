"""Replay throughput of two source trees (before / after a change), alternated in fresh processes, as medians.

Why alternated: on a shared or throttled machine the speed drifts by more than most changes (seen here: 2x within
a minute), so timing one tree and then the other compares the machine's moments, not the trees. Each round runs
both trees in turn (the order alternating), each in a fresh interpreter with ``PYTHONPATH=<tree>/src``, one
process and ``--jobs``; every run also times parse-only (gunzip + ``orjson.loads``) of the same input, so each
figure is given as a ratio to parsing too. CPU is the process's and its workers' (``time.process_time`` plus
``RUSAGE_CHILDREN``).

    python benchmarks/replay_compare.py --tree before=../old-checkout --tree after=. [--rounds 4] [--jobs 2]
                                        [--files 8] [PATH]

PATH defaults to the shared SWE-bench file (``$SPANBREAKER_SWEBENCH_DATA`` or ``../shared/data/``). ``--files N``
first splits it into N gzip files (every Nth line each) and replays that directory: an archive of several files.
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"

CHILD = r"""
import gzip, resource, sys, time
from pathlib import Path
import orjson
from spanbreaker.replay import replay
from spanbreaker.replay.readers import expand_paths

path, jobs = sys.argv[1], int(sys.argv[2])

def cpu():
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime

if __name__ == "__main__":
    start, wall = cpu(), time.perf_counter()
    for file in expand_paths([path], lambda problem: None):
        with gzip.open(file, "rb") as lines:
            for line in lines:
                orjson.loads(line)
    parse_cpu, parse_wall = cpu() - start, time.perf_counter() - wall
    start, wall = cpu(), time.perf_counter()
    spans = sum(result.spans for result in replay([path], jobs=jobs))
    print(parse_cpu, parse_wall, cpu() - start, time.perf_counter() - wall, spans)
"""


def split(source: Path, files: int, into: Path) -> Path:
    """``source`` (one gzip file, one request per line) as ``files`` gzip files, every ``files``-th line each."""
    with gzip.open(source, "rb") as whole:
        lines = whole.readlines()
    for part in range(files):
        with gzip.open(into / f"part-{part:03d}.jsonl.gz", "wb") as out:
            out.writelines(lines[part::files])
    return into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?")
    parser.add_argument("--tree", action="append", required=True, metavar="NAME=DIR",
                        help="a source tree to time (its src/ is put on PYTHONPATH); give two or more")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes for the --jobs rows")
    parser.add_argument("--files", type=int, default=0, help="split the input into this many files first")
    args = parser.parse_args()
    trees = dict(tree.split("=", 1) for tree in args.tree)
    source = Path(args.path or os.environ.get("SPANBREAKER_SWEBENCH_DATA") or DEFAULT_DATA)
    if source.is_dir():
        source = next(iter(sorted(source.glob("*.gz"))))
    with tempfile.TemporaryDirectory() as tmp:
        target = split(source, args.files, Path(tmp)) if args.files else source
        rows: dict[tuple[str, int], list[list[float]]] = {}
        names = list(trees)
        for round_ in range(args.rounds):
            for name in names if round_ % 2 == 0 else names[::-1]:
                for jobs in (1, args.jobs):
                    env = {**os.environ, "PYTHONPATH": str(Path(trees[name]).resolve() / "src")}
                    out = subprocess.run([sys.executable, "-c", CHILD, str(target), str(jobs)], env=env,
                                         capture_output=True, text=True, check=True).stdout.split()
                    rows.setdefault((name, jobs), []).append([float(value) for value in out])
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"{source.name}{f' as {args.files} files' if args.files else ''}: medians of {args.rounds} alternated "
          f"rounds; load average {load} at the end")
    for (name, jobs), runs in rows.items():
        def median(index: int, runs: list[list[float]] = runs) -> float:
            return statistics.median(run[index] for run in runs)

        spans = runs[0][4]
        cpu_ratio = statistics.median(run[2] / run[0] for run in runs)
        wall_ratio = statistics.median(run[3] / run[1] for run in runs)
        print(f"{name:>10} jobs={jobs}: parse-only {median(0):.2f} s CPU | replay CPU {median(2):.2f} s "
              f"({spans / median(2):,.0f} spans/s, {cpu_ratio:.2f}x parse), wall {median(3):.2f} s "
              f"({spans / median(3):,.0f} spans/s, {wall_ratio:.2f}x parse)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
