"""Detection on every evaluation corpus at the default thresholds, with the seed articles' detectors beside.

One default configuration for every corpus (``BreakerConfig()``, observe mode): a figure here is what a user
gets without tuning. Per corpus it prints

* precision: successful runs (the benchmark's own verdict) tripped - each one a run the breaker would have
  killed although it went on to succeed;
* recall: runs that ended by exhausting a budget (step, time, cost or context limit) without success, how
  many were caught, and the model calls, tool calls and tokens the recording spent after the trip (what the
  trip would have saved); the same for every unsuccessful run;
* the seed reference detectors (``seed_detectors.py``) on the same runs, saved calls counted from their first
  firing step.

    python benchmarks/detection_corpora.py [PATH ...] [--json FILE] [--list]

PATH defaults to the shared mini-swe-agent data (``$SPANBREAKER_SWEBENCH_DATA`` or ``../shared/data/``) plus
``corpora/data/`` (see ``corpora/README.md`` for how each corpus is built). Runs are grouped by their
``eval.corpus`` resource attribute (the shared data set predates it and is recognised by its labels).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from seed_detectors import SeedVerdict, run_seeds

import spanbreaker
from spanbreaker.replay import Feeder, Problem, RecordedTrace, TraceResult, replay_trace
from spanbreaker.replay.readers import read_traces
from spanbreaker.signals import Kind, classify

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATHS = [ROOT.parent / "shared" / "data", ROOT / "corpora" / "data"]
TARGET_FALSE_TRIP_RATE = 0.01
MIN_SUCCESSES_FOR_TARGET = 100


@dataclass
class Run:
    corpus: str
    task: str
    success: bool | None
    end_reason: str
    budget_exhausted: bool
    ours: TraceResult
    seeds: SeedVerdict

    def seed_saved(self) -> tuple[int, int, int]:
        """Model calls, tool calls and tokens recorded after the seeds' first firing step."""
        if not self.seeds.earliest:
            return 0, 0, 0
        after = self.ours.steps[self.seeds.earliest[1]:]
        return sum(s.model_calls for s in after), sum(s.tool_calls for s in after), sum(s.tokens for s in after)

    def ours_saved(self) -> tuple[int, int, int]:
        r = self.ours
        return (r.model_calls_after, r.tool_calls_after, r.tokens_after_trip) if r.tripped else (0, 0, 0)


def labels(trace: RecordedTrace) -> tuple[str, str, bool | None, str, bool]:
    """(corpus, task, success, end reason, budget exhausted) from the resource attributes."""
    res = trace.resource
    if "eval.corpus" in res:
        success = res.get("eval.success")
        return (str(res["eval.corpus"]), str(res.get("eval.task_id", trace.trace_id_hex)),
                success if isinstance(success, bool) else None, str(res.get("eval.end_reason", "unknown")),
                res.get("eval.budget_exhausted") is True)
    # the shared mini-swe-agent data: swebench.resolved, and the exit status on the root span's output
    resolved = res.get("swebench.resolved")
    root = next((s for s in trace.spans if s.parent_id is None and classify(s.name, s.attributes) is Kind.AGENT),
                None)
    status = str(root.attributes.get("output.value", "")) if root is not None else ""
    end = {"Submitted": "submitted", "LimitsExceeded": "step_limit"}.get(status, "unknown")
    name = f"{res.get('service.name', 'unknown')}-swebench-verified"
    return (name, str(res.get("swebench.instance_id", trace.trace_id_hex)),
            resolved if isinstance(resolved, bool) else None, end, end == "step_limit")


@dataclass
class Corpus:
    name: str
    runs: list[Run] = field(default_factory=list)
    spans: int = 0
    seconds: float = 0.0


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100.0 * n / d:.1f}%)" if d else "-"


def _saved(rows: list[Run], ours: bool) -> str:
    picked = [r.ours_saved() if ours else r.seed_saved() for r in rows]
    model, tool, tokens = (sum(p[i] for p in picked) for i in range(3))
    return f"{model:,} / {tool:,} / {tokens:,}"


def replay_all(paths: list[str], problems: list[Problem]) -> dict[str, Corpus]:
    """Every trace through one default-config processor per corpus, and through the seeds."""
    corpora: dict[str, Corpus] = {}
    feeders: dict[str, Feeder] = {}
    for trace in read_traces(paths, problems.append):
        started = time.process_time()
        name, task, success, end, budget = labels(trace)
        corpus = corpora.setdefault(name, Corpus(name))
        feeder = feeders.setdefault(name, Feeder(spanbreaker.BreakerConfig()))
        ours = replay_trace(trace, feeder)
        corpus.runs.append(Run(name, task, success, end, budget, ours, run_seeds(trace)))
        corpus.spans += len(trace.spans)
        corpus.seconds += time.process_time() - started
    for feeder in feeders.values():
        feeder.shutdown()
    return corpora


def report(corpus: Corpus) -> tuple[bool, list[str]]:
    """The corpus's table rows (printed) and whether it meets the precision target."""
    runs = corpus.runs
    ok = [r for r in runs if r.success is True]
    failed = [r for r in runs if r.success is False]
    runaway = [r for r in failed if r.budget_exhausted]
    ends = Counter(r.end_reason for r in runs)
    lines = [f"== {corpus.name}: {len(runs)} runs, {corpus.spans:,} spans, {corpus.seconds:.1f} s CPU; "
             f"{len(ok)} successful, {len(failed)} unsuccessful; end reasons: "
             + ", ".join(f"{k} {v}" for k, v in ends.most_common())]
    head = f"  {'':<34} {'spanbreaker (defaults)':>26} {'seed detectors (any)':>26}"
    lines.append(head)

    def row(label: str, ours: str, seeds: str) -> None:
        lines.append(f"  {label:<34} {ours:>26} {seeds:>26}")

    row("successful runs tripped", _pct(sum(r.ours.tripped for r in ok), len(ok)),
        _pct(sum(r.seeds.tripped for r in ok), len(ok)))
    row("budget-exhausted failures caught", _pct(sum(r.ours.tripped for r in runaway), len(runaway)),
        _pct(sum(r.seeds.tripped for r in runaway), len(runaway)))
    row("  saved model/tool calls/tokens", _saved(runaway, True), _saved(runaway, False))
    row("all unsuccessful runs tripped", _pct(sum(r.ours.tripped for r in failed), len(failed)),
        _pct(sum(r.seeds.tripped for r in failed), len(failed)))
    row("  saved model/tool calls/tokens", _saved(failed, True), _saved(failed, False))
    total = (sum(r.ours.model_calls for r in failed), sum(r.ours.tool_calls for r in failed),
             sum(r.ours.tokens for r in failed))
    row("  (spent by all unsuccessful runs)", f"{total[0]:,} / {total[1]:,} / {total[2]:,}", "")
    by = Counter(r.ours.detector for r in runs if r.ours.tripped)
    if by:
        lines.append("  spanbreaker trips by detector (successful / unsuccessful): " + ", ".join(
            f"{d} {sum(r.ours.detector == d for r in ok)}/{sum(r.ours.detector == d for r in failed)}"
            for d, _ in by.most_common()))
    rate = sum(r.ours.tripped for r in ok) / len(ok) if ok else 0.0
    applies = len(ok) >= MIN_SUCCESSES_FOR_TARGET
    meets = rate <= TARGET_FALSE_TRIP_RATE or not applies
    lines.append(f"  precision target (<= {100 * TARGET_FALSE_TRIP_RATE:.0f}% of successful runs tripped"
                 f"{'' if applies else ', not applicable below 100 successful runs'}): "
                 f"{'PASS' if meets else 'FAIL'}")
    return meets, lines


def listing(corpus: Corpus) -> list[str]:
    """Every trip on a successful run (each to be read by hand), then every budget-exhausted run missed."""
    lines = [f"-- {corpus.name}: trips on successful runs"]
    for r in sorted((r for r in corpus.runs if r.success is True and r.ours.tripped), key=lambda r: r.task):
        res = r.ours
        lines.append(f"  {r.task:<44} {res.detector:<16} {res.step} of {len(res.steps)} steps; saved "
                     f"{res.model_calls_after}+{res.tool_calls_after} calls: {res.reason}")
    lines.append(f"-- {corpus.name}: trips on unsuccessful runs")
    for r in sorted((r for r in corpus.runs if r.success is False and r.ours.tripped), key=lambda r: r.task):
        res = r.ours
        lines.append(f"  {r.task:<44} {r.end_reason:<12} {res.detector:<16} {res.step} of {len(res.steps)} "
                     f"steps; saved {res.model_calls_after}+{res.tool_calls_after} calls: {res.reason}")
    lines.append(f"-- {corpus.name}: budget-exhausted unsuccessful runs not caught")
    for r in sorted((r for r in corpus.runs if r.success is False and r.budget_exhausted and not r.ours.tripped),
                    key=lambda r: r.task):
        lines.append(f"  {r.task:<44} {r.end_reason:<12} {len(r.ours.steps)} steps, {r.ours.model_calls} model "
                     f"+ {r.ours.tool_calls} tool calls; seeds: {r.seeds.earliest}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("paths", nargs="*", help="trace files or directories (default: every known corpus)")
    parser.add_argument("--json", metavar="FILE", help="write every verdict (ours and the seeds') as JSON lines")
    parser.add_argument("--list", action="store_true", help="list every trip and every missed runaway")
    args = parser.parse_args(argv)
    shared = os.environ.get("SPANBREAKER_SWEBENCH_DATA")
    defaults = ([Path(shared)] if shared else DEFAULT_PATHS[:1]) + DEFAULT_PATHS[1:]
    paths = args.paths or [str(p) for p in defaults if p.exists()]

    problems: list[Problem] = []
    started = time.perf_counter()
    corpora = replay_all(paths, problems)
    print(f"Replayed {sum(len(c.runs) for c in corpora.values())} runs from {len(corpora)} corpora in "
          f"{time.perf_counter() - started:.1f} s (one default BreakerConfig, observe mode)")
    for problem in problems:
        print(f"input problem: {problem}", file=sys.stderr)
    all_meet = True
    for corpus in sorted(corpora.values(), key=lambda c: c.name):
        meets, lines = report(corpus)
        all_meet &= meets
        print("\n" + "\n".join(lines))
    if args.list:
        for corpus in sorted(corpora.values(), key=lambda c: c.name):
            print("\n" + "\n".join(listing(corpus)))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            for corpus in sorted(corpora.values(), key=lambda c: c.name):
                for r in corpus.runs:
                    verdict: dict[str, Any] = r.ours.as_json()
                    verdict.pop("resource", None)
                    fh.write(json.dumps({"corpus": r.corpus, "task": r.task, "success": r.success,
                                         "end_reason": r.end_reason, "budget_exhausted": r.budget_exhausted,
                                         **verdict, "seeds": r.seeds.first}, sort_keys=True) + "\n")
    return 0 if all_meet and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
