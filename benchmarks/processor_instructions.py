"""Per-span cost of the breaker in CPU instructions (valgrind callgrind), as a ratio to a bare SDK span.

Wall-clock timings on a shared machine move with whatever else runs; instruction counts do not. This runs the
workload of ``processor_cost.py`` (early point: short healthy runs) under callgrind for two run counts, with
and without the breaker, and takes the differences, so interpreter start-up and imports cancel out. String
hashing is seeded the same in every run (``PYTHONHASHSEED=0``): with random seeds, dict and set layouts alone
moved the figure by a couple of thousand instructions per span between identical runs.

With ``--caches`` the runs go under cachegrind's cache simulation instead (its model of this CPU's first-level
caches, read from the CPU), which adds the first-level instruction and data cache misses per span: what the
breaker's code and data cost beyond their instructions when they run between the SDK's (processor_cost.py's
"hooks alone" against "in the run"), counted the same in every run.

    python benchmarks/processor_instructions.py [--disable all|id,id] [--shape minimal|smolagents|both] [--caches]
        [--prompt-kib N]

Needs ``valgrind`` (Debian package); takes a minute or two.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPANS_PER_RUN = 31  # an agent span, then 10 steps of (step, model call, tool call)
DRIVER = """
import sys, time
sys.path.insert(0, {here!r})
import processor_cost as pc
from spanbreaker.config import DETECTOR_IDS
with_breaker, runs, disable, shape = sys.argv[1] == "1", int(sys.argv[2]), sys.argv[3], sys.argv[4]
if int(sys.argv[5]):
    pc.PROMPT = pc.long_prompt(int(sys.argv[5]))
if disable == "all":
    pc.BUDGETS["disabled_detectors"] = frozenset(d for d in DETECTOR_IDS if d != "forced")
elif disable:
    pc.BUDGETS["disabled_detectors"] = frozenset(disable.split(","))
provider, _ = pc._provider(with_breaker)
# The price table loads in a background thread (seconds under valgrind): import it here, so that the import
# never spills into the counted workload, and price the workload's model once (the per-model cache).
import genai_prices  # noqa: F401
from spanbreaker.pricing import cost_usd
cost_usd("gpt-4o-mini", None, 1, 1)
pc.early(provider, runs, shape)
"""


COUNTS = ("instructions", "I1 misses", "D1 misses")
_CACHEGRIND = {"instructions": r"I\s+refs:\s+([\d,]+)", "I1 misses": r"I1\s+misses:\s+([\d,]+)",
               "D1 misses": r"D1\s+misses:\s+([\d,]+)"}


def measure(with_breaker: bool, runs: int, disable: str, shape: str, caches: bool, prompt_kib: int = 0
            ) -> dict[str, int]:
    """Counts of one run of the workload: instructions (callgrind), or with ``caches`` instructions and first-level
    cache misses (cachegrind)."""
    driver = DRIVER.format(here=str(HERE))
    tool = (["--tool=cachegrind", "--cache-sim=yes", "--cachegrind-out-file=/dev/null"] if caches
            else ["--tool=callgrind", "--callgrind-out-file=/dev/null"])
    result = subprocess.run(
        ["valgrind", *tool, sys.executable, "-c", driver, "1" if with_breaker else "0", str(runs), disable, shape,
         str(prompt_kib)],
        capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"})  # one string-hash layout every run: dict probing, set order
    patterns = _CACHEGRIND if caches else {"instructions": r"Collected : (\d+)"}
    found = {name: re.search(pattern, result.stderr) for name, pattern in patterns.items()}
    if not all(found.values()):
        raise SystemExit(f"valgrind printed no counts:\n{result.stderr[-2000:]}")
    return {name: int(match.group(1).replace(",", "")) for name, match in found.items() if match is not None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--disable", default="", help="detectors to disable: 'all' or comma-separated ids")
    parser.add_argument("--shape", choices=["minimal", "smolagents", "both"], default="both",
                        help="span attributes (see processor_cost.py)")
    parser.add_argument("--caches", action="store_true",
                        help="cachegrind: first-level instruction and data cache misses per span too")
    parser.add_argument("--prompt-kib", type=int, default=0,
                        help="each model call's messages this large (processor_cost.py --prompt-kib)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    low, high = 20, 60
    shapes = ["minimal", "smolagents"] if args.shape == "both" else [args.shape]
    jobs = [(shape, with_breaker, runs) for shape in shapes for with_breaker in (False, True) for runs in (low, high)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # one valgrind process per core
        counts = dict(zip(jobs, pool.map(
            lambda job: measure(job[1], job[2], args.disable, job[0], args.caches, args.prompt_kib), jobs),
            strict=True))
    for shape in shapes:
        for name in COUNTS if args.caches else COUNTS[:1]:
            per_span = {with_breaker: (counts[shape, with_breaker, high][name] - counts[shape, with_breaker, low][name])
                        / ((high - low) * SPANS_PER_RUN) for with_breaker in (False, True)}
            bare, breaker = per_span[False], per_span[True]
            print(f"{shape:<11} spans: bare SDK span {bare:,.0f} {name}; with breaker {breaker:,.0f}; "
                  f"added {breaker - bare:,.0f} = {(breaker - bare) / bare:.3f}x")


if __name__ == "__main__":
    main()
