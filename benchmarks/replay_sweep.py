"""What a threshold sweep costs: ``spanbreaker replay --sweep KEY=a,b,c,d`` against four separate replays.

Both sides run the real command as users do (a subprocess each, ``--json`` to a file); CPU time is the children's
user + system time (``resource.getrusage``), wall time is printed beside it, best of ``--repeat``. The separate
replays set the value through ``SPANBREAKER_<KEY>``. The script also checks that the sweep's verdict for every
value and trace is the separate replay's verdict (exit status 1 if not).

Why a sweep should be cheaper: reading (gunzip, JSON, OTLP decoding) and the per-trace timeline are done once;
only the feed through the SDK and the processor is repeated per value. A value equal to the base configuration
shares the base's processor.

    python benchmarks/replay_sweep.py [PATH ...] [--key tool_repeat_max] [--values 3,4,5,6] [--repeat 2]

PATH defaults to ``$SPANBREAKER_SWEBENCH_DATA`` or ``../shared/data/`` next to the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
VERDICT = ("tripped", "detector", "reason", "step", "span_id", "calls_after_trip", "tokens_after_trip")


def _run(args: list[str], env: dict[str, str], out: Path) -> tuple[float, float]:
    """CPU seconds (children's user + system) and wall seconds of one ``spanbreaker`` run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with out.open("w") as stdout:
        done = subprocess.run([sys.executable, "-m", "spanbreaker.cli", *args], stdout=stdout,
                              stderr=subprocess.PIPE, text=True, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"spanbreaker {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def _verdicts(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--key", default="tool_repeat_max")
    parser.add_argument("--values", default="3,4,5,6")
    parser.add_argument("--repeat", type=int, default=2, help="runs per measurement; the best is reported")
    args = parser.parse_args(argv)
    paths = args.paths or [os.environ.get("SPANBREAKER_SWEBENCH_DATA") or str(DEFAULT_DATA)]
    values = args.values.split(",")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPANBREAKER_")}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sweep_runs, separate_runs = [], []
        for _ in range(args.repeat):
            sweep_runs.append(_run(["replay", *paths, "--json", "--no-progress", "--sweep",
                                    f"{args.key}={args.values}"], env, work / "sweep.jsonl"))
            cpu = wall = 0.0
            for value in values:
                one = dict(env, **{f"SPANBREAKER_{args.key.upper()}": value})
                c, w = _run(["replay", *paths, "--json", "--no-progress"], one, work / f"{value}.jsonl")
                cpu, wall = cpu + c, wall + w
            separate_runs.append((cpu, wall))
        swept = _verdicts(work / "sweep.jsonl")
        mismatches = 0
        tripped = {}
        for value in values:
            label = f"{args.key}={value}"
            alone = _verdicts(work / f"{value}.jsonl")
            in_sweep = [next(v for v in line["sweep"] if v["config"] == label) for line in swept]
            mismatches += sum({k: a[k] for k in VERDICT} != {k: s[k] for k in VERDICT}
                              for a, s in zip(alone, in_sweep, strict=True))
            tripped[label] = sum(v["tripped"] for v in in_sweep)
    sweep_cpu, sweep_wall = min(sweep_runs)
    sep_cpu, sep_wall = min(separate_runs)
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; "
          f"{len(swept)} traces; best of {args.repeat}")
    print(f"{'--sweep ' + args.key + '=' + args.values:<44} {sweep_cpu:7.2f} s CPU  (wall {sweep_wall:6.2f} s)")
    print(f"{f'{len(values)} separate replays':<44} {sep_cpu:7.2f} s CPU  (wall {sep_wall:6.2f} s)")
    print(f"{'sweep / separate':<44} {sweep_cpu / sep_cpu:7.2f} x CPU  (wall {sweep_wall / sep_wall:.2f} x)")
    print("traces tripped per value: " + ", ".join(f"{k} {v}" for k, v in tripped.items()))
    print(f"verdicts differing between the sweep and the separate replays: {mismatches}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
