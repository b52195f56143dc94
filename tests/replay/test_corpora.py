"""The evaluation corpora (``corpora/``) read cleanly through ``spanbreaker replay`` and carry their labels.

A slice of each converted corpus is kept under ``tests/replay/data`` (``corpora_slice.otlp.jsonl.gz``, lines cut
unchanged from the converters' output). What is checked is the converters' contract with the benchmark, not a
verdict: detection changes are judged by ``benchmarks/detection_corpora.py`` over the whole corpora.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import spanbreaker
from spanbreaker.replay import Feeder, Problem, read_traces, replay
from spanbreaker.signals import Kind, classify

SLICE = Path(__file__).parent / "data" / "corpora_slice.otlp.jsonl.gz"
LABELS = {
    # eval.task_id: (eval.corpus, eval.success, eval.end_reason, eval.budget_exhausted)
    "django__django-12419": ("vorflux-swebench-verified", True, "submitted", False),
    "django__django-14315": ("vorflux-swebench-verified", False, "submitted", False),
    "hand-crafted/8": ("who-and-when", False, "step_limit", True),
    "algorithm-generated/5": ("who-and-when", False, "final_answer", False),
}


def test_every_corpus_slice_reads_without_a_problem_and_keeps_its_labels() -> None:
    problems: list[Problem] = []
    feeder = Feeder(spanbreaker.BreakerConfig())
    results = list(replay([SLICE], problems=problems, feeder=feeder))
    assert problems == []
    assert feeder.processor.stats.internal_errors == 0
    labels = {r.resource["eval.task_id"]: (r.resource["eval.corpus"], r.resource["eval.success"],
                                           r.resource["eval.end_reason"], r.resource["eval.budget_exhausted"])
              for r in results}
    assert labels == LABELS
    for r in results:
        assert r.steps and r.model_calls > 0, r.resource["eval.task_id"]


def test_the_converted_shape_is_the_shared_data_sets() -> None:
    """An AGENT root, ``Step N`` CHAIN spans under it, LLM and TOOL spans with the attributes the detectors read
    (tool name, JSON arguments, result text, model name, token counts)."""
    for trace in read_traces([SLICE], lambda p: None):
        by_id = {s.span_id: s for s in trace.spans}
        roots = [s for s in trace.spans if s.parent_id is None]
        assert len(roots) == 1 and classify(roots[0].name, roots[0].attributes) is Kind.AGENT
        kinds = Counter(classify(s.name, s.attributes) for s in trace.spans)
        assert kinds[Kind.CHAIN] and kinds[Kind.LLM] and kinds[Kind.TOOL], trace.resource["eval.task_id"]
        for span in trace.spans:
            kind = classify(span.name, span.attributes)
            if span.parent_id is not None:
                assert span.parent_id in by_id
            if kind is Kind.CHAIN:
                assert span.name.startswith("Step ")
            if kind is Kind.TOOL:
                assert span.attributes["tool.name"] == span.name
                assert "kwargs" in json.loads(span.attributes["input.value"])
                assert isinstance(span.attributes["output.value"], str)
            if kind is Kind.LLM:
                assert span.attributes["llm.model_name"]
                assert span.attributes["llm.token_count.completion"] >= 0


def test_spanbreaker_replay_cli_reads_the_slice() -> None:
    done = subprocess.run([sys.executable, "-m", "spanbreaker.cli", "replay", str(SLICE), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr  # 1: some trace would have tripped
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert {row["resource"]["eval.task_id"] for row in rows} == set(LABELS)
    assert "problem" not in done.stderr.lower()
