"""Pinned replay verdicts: per corpus, per trace, what the default configuration decides (action, detector, step
index, span id), committed under ``tests/replay/verdicts/``.

Why pinned: replay's speed work (the engine fed directly, the decoder, ``--jobs``) must not move a single verdict,
and a detector change that does move one should show which traces, in review. The default suite checks the
corpora committed to the repository (:data:`COMMITTED`); ``make verdicts`` checks every corpus (:data:`CORPORA`)
and fails naming any that is missing (``make corpora`` builds them; the shared mini-swe-agent file is found as
``benchmarks/detection_swebench.py`` finds it).

    python -m tests.replay.verdicts [--all] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from spanbreaker.config import BreakerConfig
from spanbreaker.replay import Problem, TraceResult, replay

ROOT = Path(__file__).resolve().parents[2]
PINNED = Path(__file__).resolve().parent / "verdicts"
SHARED = "mini-swe-agent-gemini3pro-swebench-verified.otlp.jsonl.gz"


def _shared_data() -> Path:
    folder = os.environ.get("SPANBREAKER_SWEBENCH_DATA")
    base = Path(folder) if folder else ROOT.parent / "shared" / "data"
    return base if base.suffix == ".gz" else base / SHARED


COMMITTED = [ROOT / "corpora" / "data" / "who-and-when.otlp.jsonl.gz",
             ROOT / "tests" / "replay" / "data" / "swebench_slice.otlp.jsonl.gz",
             ROOT / "tests" / "replay" / "data" / "corpora_slice.otlp.jsonl.gz",
             ROOT / "corpora" / "data" / "reflexion-hotpotqa.otlp.jsonl.gz",
             ROOT / "corpora" / "data" / "workbench.otlp.jsonl.gz"]
"""In git: checked by the default suite."""
CORPORA = [_shared_data(), ROOT / "corpora" / "data" / "coder-swebench-lite.otlp.jsonl.gz",
           ROOT / "corpora" / "data" / "vorflux-swebench-verified.otlp.jsonl.gz",
           ROOT / "corpora" / "data" / "aider-swebench-lite.otlp.jsonl.gz",
           ROOT / "corpora" / "data" / "ldb-humaneval.otlp.jsonl.gz",
           ROOT / "corpora" / "data" / "agentdojo-benign.otlp.jsonl.gz",
           ROOT / "corpora" / "data" / "step-webarena.otlp.jsonl.gz",
           ROOT / "corpora" / "data" / "intercode-ctf.otlp.jsonl.gz",
           ROOT / "corpora" / "data" / "bfcl-multi-turn.otlp.jsonl.gz", *COMMITTED]
"""Every corpus: ``make verdicts``."""


def name_of(path: Path) -> str:
    return path.name.split(".")[0]


def verdict(result: TraceResult) -> list[Any]:
    """[action, detector, step index, span id]; ``["quiet", None, None, None]`` for a trace that did not trip."""
    if result.tripped:
        return ["trip", result.detector, result.step_index, result.span_id]
    if result.steer is not None:
        return ["steer", result.steer["detector"], None, result.steer["span_id"]]
    return ["quiet", None, None, None]


def verdicts_of(path: Path) -> dict[str, list[Any]]:
    """The verdicts of one corpus at the default thresholds, by trace id in input order."""
    problems: list[Problem] = []
    out = {r.trace_id: verdict(r) for r in replay([path], BreakerConfig(), problems=problems)}
    if problems:
        raise AssertionError(f"{path}: input problems: {problems[:3]}")
    return out


def pinned(path: Path) -> dict[str, list[Any]]:
    loaded: dict[str, list[Any]] = json.loads((PINNED / f"{name_of(path)}.json").read_text(encoding="utf-8"))
    return loaded


def write(path: Path, verdicts: dict[str, list[Any]]) -> None:
    """One trace a line, so a moved verdict is one line of the diff."""
    PINNED.mkdir(exist_ok=True)
    lines = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in verdicts.items()]
    (PINNED / f"{name_of(path)}.json").write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")


def differences(expected: dict[str, list[Any]], got: dict[str, list[Any]]) -> list[str]:
    """Readable lines for every trace whose verdict moved, appeared or vanished (empty when identical)."""
    out = [f"{t}: pinned {expected.get(t)}, replayed {got.get(t)}"
           for t in dict.fromkeys([*expected, *got]) if expected.get(t) != got.get(t)]
    if not out and list(expected) != list(got):
        out.append("same verdicts, different trace order")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every corpus, not only those committed")
    parser.add_argument("--write", action="store_true", help="replace the pinned verdicts with today's")
    args = parser.parse_args(argv)
    paths = CORPORA if args.all else COMMITTED
    missing = [p for p in paths if not p.is_file()]
    if missing:
        for path in missing:
            print(f"MISSING corpus {path} (make corpora; SPANBREAKER_SWEBENCH_DATA for {SHARED})", file=sys.stderr)
        return 2
    failed = 0
    for path in paths:
        got = verdicts_of(path)
        if args.write:
            write(path, got)
            print(f"{name_of(path)}: {len(got)} verdicts written")
            continue
        moved = differences(pinned(path), got)
        tripped = sum(v[0] != "quiet" for v in got.values())
        print(f"{name_of(path)}: {len(got)} traces, {tripped} tripped or steered: "
              + ("identical to the pinned verdicts" if not moved else f"{len(moved)} differ"))
        for line in moved[:20]:
            print(f"  {line}")
        failed += bool(moved)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
