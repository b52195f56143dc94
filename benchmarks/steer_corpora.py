"""Stop or steer? Every evaluation corpus replayed under ``response="stop"`` and ``response="steer"`` in one pass.

A replay cannot show how a model answers the steer message (the recording never received it), so the steer
column is the pessimistic case: an agent that ignores the message and keeps on. Per corpus it prints

* successful runs: tripped under stop (each a success stop would have killed), reached by a steer first, and
  still tripped under steer if the agent ignored the message;
* unsuccessful runs: tripped under each response, and the calls (model + tool) the recording spent after the
  trip - what each would have saved; the difference is what a steer costs when the agent does not listen.

    python benchmarks/steer_corpora.py [PATH ...]

PATH defaults to the shared mini-swe-agent data (``$SPANBREAKER_SWEBENCH_DATA`` or ``../shared/data/``) plus
``corpora/data/`` (``make corpora``; see ``corpora/README.md``).
"""

from __future__ import annotations

import os
import sys
import time
from collections import defaultdict
from pathlib import Path

from spanbreaker import BreakerConfig
from spanbreaker.replay import Feeder, replay_many

ROOT = Path(__file__).resolve().parents[1]


def default_paths() -> list[str]:
    shared = Path(os.environ.get("SPANBREAKER_SWEBENCH_DATA", ROOT.parent / "shared" / "data"))
    return [str(p) for p in (shared, ROOT / "corpora" / "data") if p.exists()]


def main(argv: list[str]) -> int:
    paths = argv or default_paths()
    feeders = [Feeder(BreakerConfig()), Feeder(BreakerConfig(response="steer"))]
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    started, wall = time.process_time(), time.perf_counter()
    try:
        for stop, steer in replay_many(paths, feeders):
            corpus = str(stop.resource.get("eval.corpus", "mini-swe-agent-swebench-verified"))
            row = rows[corpus]
            kind = {True: "ok", False: "failed"}.get(stop.success, "unlabelled")  # type: ignore[arg-type]
            row[kind] += 1
            row[f"{kind}_stop"] += stop.tripped
            row[f"{kind}_steered"] += steer.steered
            row[f"{kind}_steer_trip"] += steer.tripped
            row[f"{kind}_saved_stop"] += stop.calls_after_trip
            row[f"{kind}_saved_steer"] += steer.calls_after_trip
    finally:
        for feeder in feeders:
            feeder.shutdown()
    print(f"replayed in {time.process_time() - started:.1f} s CPU, {time.perf_counter() - wall:.1f} s wall")
    print("corpus | runs ok/failed | ok tripped: stop / steered first / steer ignored -> tripped | "
          "failed tripped: stop / steer | calls saved on failed: stop / steer")
    for corpus, r in sorted(rows.items()):
        print(f"{corpus} | {r['ok']}/{r['failed']} | {r['ok_stop']} / {r['ok_steered']} / {r['ok_steer_trip']} | "
              f"{r['failed_stop']} / {r['failed_steer_trip']} | {r['failed_saved_stop']} / {r['failed_saved_steer']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
