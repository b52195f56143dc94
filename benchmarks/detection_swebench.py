"""Detection on 500 real SWE-bench agent runs: spanbreaker at default thresholds versus the seed articles'
reference detectors, over the same file, in the same pass.

Why resolved runs matter most: a resolved run solved its task, so any trip there would have killed a
successful run (a false trip). Trips on unresolved runs are candidates to read, not proven catches; the script
lists each with its detector, reason, step and the calls the recording made after it.

    python benchmarks/detection_swebench.py [PATH ...] [--json FILE]

PATH defaults to ``$SPANBREAKER_SWEBENCH_DATA`` or ``../shared/data/`` next to the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from seed_detectors import SEED_DETECTORS, run_seeds

import spanbreaker
from spanbreaker.replay import Feeder, Problem, replay_trace
from spanbreaker.replay.readers import read_traces

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
TARGET_FALSE_TRIP_RATE = 0.01


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100.0 * n / d:.1f}%)" if d else f"{n}/0"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="trace files or directories (default: the shared SWE-bench data)")
    parser.add_argument("--json", metavar="FILE", help="write every verdict (ours and the seeds') as JSON lines")
    args = parser.parse_args(argv)
    paths = args.paths or [os.environ.get("SPANBREAKER_SWEBENCH_DATA") or str(DEFAULT_DATA)]

    problems: list[Problem] = []
    feeder = Feeder(spanbreaker.BreakerConfig())
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for trace in read_traces(paths, problems.append):
        result = replay_trace(trace, feeder)
        seeds = run_seeds(trace)
        resolved = trace.resource.get("swebench.resolved")
        rows.append({"instance": trace.resource.get("swebench.instance_id", result.trace_id),
                     "resolved": resolved, "ours": result, "seeds": seeds})
    elapsed = time.perf_counter() - started
    for problem in problems:
        print(f"input problem: {problem}", file=sys.stderr)

    resolved = [r for r in rows if r["resolved"] is True]
    unresolved = [r for r in rows if r["resolved"] is False]
    print(f"Replayed {len(rows)} runs ({feeder.stats.spans:,} spans) in {elapsed:.1f} s; "
          f"{len(resolved)} resolved, {len(unresolved)} unresolved; "
          f"processor internal errors: {feeder.engine.stats.internal_errors}")
    print()
    ours_res = sum(r["ours"].tripped for r in resolved)
    ours_unres = sum(r["ours"].tripped for r in unresolved)
    seed_res = sum(r["seeds"].tripped for r in resolved)
    seed_unres = sum(r["seeds"].tripped for r in unresolved)
    print(f"{'detector set':<44} {'resolved runs tripped':>24} {'unresolved runs tripped':>26}")
    print(f"{'spanbreaker (defaults)':<44} {_pct(ours_res, len(resolved)):>24} {_pct(ours_unres, len(unresolved)):>26}")
    print(f"{'seed reference detectors (any)':<44} {_pct(seed_res, len(resolved)):>24} "
          f"{_pct(seed_unres, len(unresolved)):>26}")
    for name in SEED_DETECTORS:
        a = sum(name in r["seeds"].first for r in resolved)
        b = sum(name in r["seeds"].first for r in unresolved)
        print(f"{'  seed: ' + name:<44} {_pct(a, len(resolved)):>24} {_pct(b, len(unresolved)):>26}")
    ours_by = Counter(r["ours"].detector for r in rows if r["ours"].tripped)
    for name, _ in ours_by.most_common():
        a = sum(r["ours"].detector == name for r in resolved)
        b = sum(r["ours"].detector == name for r in unresolved)
        print(f"{'  spanbreaker: ' + name:<44} {_pct(a, len(resolved)):>24} {_pct(b, len(unresolved)):>26}")
    seed_steps = [r["seeds"].earliest[1] for r in resolved if r["seeds"].earliest]
    if seed_steps:
        seed_steps.sort()
        print(f"\nseed detectors on resolved runs: first trip at median step {seed_steps[len(seed_steps) // 2]} "
              f"(would have killed a run that went on to solve its task)")

    rate = ours_res / len(resolved) if resolved else 0.0
    verdict = "PASS" if rate <= TARGET_FALSE_TRIP_RATE else "FAIL"
    print(f"\nfalse-trip rate on resolved runs at defaults: {100 * rate:.2f}% "
          f"(target <= {100 * TARGET_FALSE_TRIP_RATE:.0f}%): {verdict}")

    print("\nspanbreaker trips (resolved runs first: each is a false trip):")
    for r in sorted((r for r in rows if r["ours"].tripped), key=lambda r: (r["resolved"] is not True, r["instance"])):
        res = r["ours"]
        print(f"  {r['instance']:<40} resolved={r['resolved']!s:<5} {res.detector:<16} {res.step} "
              f"({len(res.steps)} steps) model calls after={res.model_calls_after} "
              f"tool calls after={res.tool_calls_after} tokens after={res.tokens_after_trip:,}")
        print(f"      reason: {res.reason}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps({"instance": r["instance"], "resolved": r["resolved"], **r["ours"].as_json(),
                                     "seeds": r["seeds"].first}) + "\n")
    return 0 if verdict == "PASS" and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
