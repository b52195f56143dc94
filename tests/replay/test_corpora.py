"""The evaluation corpora (``corpora/``) read cleanly through ``spanbreaker replay`` and carry their labels.

A slice of each converted corpus is kept under ``tests/replay/data`` (``corpora_slice.otlp.jsonl.gz``, lines cut
unchanged from the converters' output). What is checked is the converters' contract with the benchmark, not a
verdict: detection changes are judged by ``benchmarks/detection_corpora.py`` over the whole corpora.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import spanbreaker
from spanbreaker.replay import Feeder, Problem, read_traces, replay
from spanbreaker.signals import Kind, classify

SLICE = Path(__file__).parent / "data" / "corpora_slice.otlp.jsonl.gz"
CORPORA = Path(__file__).resolve().parents[2] / "corpora"
LABELS = {
    # eval.task_id: (eval.corpus, eval.success, eval.end_reason, eval.budget_exhausted)
    "django__django-12419": ("vorflux-swebench-verified", True, "submitted", False),
    "django__django-14315": ("vorflux-swebench-verified", False, "submitted", False),
    "hand-crafted/8": ("who-and-when", False, "step_limit", True),
    "algorithm-generated/5": ("who-and-when", False, "final_answer", False),
    # AgentDojo: 33 tool calls (parallel ones) that end in success, quiet; and a run that lists the files five
    # times with the same answer before it answers, a real repetition on a run the task's check passes.
    "slack/user_task_13": ("agentdojo-benign", True, "final_answer", False),
    "banking/user_task_8": ("agentdojo-benign", True, "final_answer", False),
    # SteP on WebArena: 16 scrolls through a long page, every page after one new (paging, quiet); and `scroll [down]`
    # at the bottom of a page five times, the page the same after each (a real loop in a run WebArena passes).
    "webarena/306": ("step-webarena", False, "unknown", False),
    "webarena/313": ("step-webarena", True, "final_answer", False),
}


def test_every_corpus_slice_reads_without_a_problem_and_keeps_its_labels() -> None:
    problems: list[Problem] = []
    feeder = Feeder(spanbreaker.BreakerConfig())
    results = list(replay([SLICE], problems=problems, feeder=feeder))
    assert problems == []
    assert feeder.engine.stats.internal_errors == 0
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


def _converter(name: str) -> Any:
    """A converter module of ``corpora/`` (they import ``otlp_builder`` as a top-level module, as run there)."""
    sys.path.insert(0, str(CORPORA))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(CORPORA))


def _replayed(path: Path, request: dict[str, Any]) -> tuple[tuple[Any, ...], Any]:
    """``request`` written as a corpus file and replayed: (its labels: corpus, success, end reason, budget
    exhausted; its read trace). Asserts the replay met no input problem."""
    _converter("otlp_builder").write_jsonl_gz(path, [request])
    problems: list[Problem] = []
    (result,) = replay([path], problems=problems)
    assert problems == []
    res = result.resource
    (trace,) = read_traces([path], lambda p: None)
    return (res["eval.corpus"], res["eval.success"], res["eval.end_reason"], res["eval.budget_exhausted"]), trace


def test_coder_converter_output_reads_and_labels_a_cost_limit_exit(tmp_path: Path) -> None:
    """CodeR's data has no licence, so no slice of it is committed: its converter runs here on a record of the
    source's shape (a plan, one role's actions ending in ``succeed``, a harness ``exit_cost``)."""
    record = {
        "history": [
            {"agent": "Manager", "role": "system", "content": "You are a Manager."},
            {"agent": "Manager", "role": "user", "content": "ISSUE: the parser drops the last line"},
            {"agent": "Manager", "role": "assistant", "content": "Plan one: Programmer."},
            {"agent": "Programmer", "role": "system", "content": "You are an autonomous programmer."},
            {"agent": "Programmer", "role": "user", "content": "ISSUE: the parser drops the last line"},
            {"agent": "Programmer", "role": "assistant", "content": "Open the parser."},
            {"agent": "Programmer", "role": "user", "content": "[File: parser.py (40 lines total)]"},
            {"agent": "Programmer", "role": "assistant", "content": "Done."},
        ],
        "trajectory": [
            {"action": "plan\n{\"entry\": \"Programmer\"}", "observation": "conclusions", "response": "Plan one."},
            {"action": "open parser.py\n", "observation": "[File: parser.py (40 lines total)]", "response": "Open."},
            {"action": "succeed\n", "observation": "", "response": "Done."},
            {"action": "exit_cost", "observation": "Exited (autosubmitted)", "response": ""},
        ],
        "info": {"exit_status": "submitted", "model_stats": {"tokens_sent": 1200, "api_calls": 3}},
    }
    request = _converter("convert_coder").convert_run("demo__demo-1", record, resolved=False)
    labels, trace = _replayed(tmp_path / "coder.otlp.jsonl.gz", request)
    assert labels == ("coder-swebench-lite", False, "cost_limit", True)
    agents = {s.attributes.get("agent.name") for s in trace.spans if classify(s.name, s.attributes) is Kind.AGENT}
    tools = [s.attributes["tool.name"] for s in trace.spans if classify(s.name, s.attributes) is Kind.TOOL]
    assert agents == {"Manager", "Programmer"} and tools == ["open"]


def test_intercode_converter_pairs_repeated_call_ids_by_position_and_labels_a_message_limit(tmp_path: Path) -> None:
    """intercode-ctf states no licence, so no slice of it is committed: its converter runs here on an Inspect sample
    of the source's shape. Gemini gives every call of a tool the same id (``bash``): paired by id, both calls got the
    last result (a first build tripped ``error_loop`` on a successful run that way); they pair by position."""
    def model_event(message_id: str, at: str, done: str) -> dict[str, Any]:
        return {"event": "model", "timestamp": at, "completed": done,
                "output": {"choices": [{"message": {"id": message_id}}],
                           "usage": {"input_tokens": 900, "output_tokens": 40}}}

    def tool_event(at: str, done: str) -> dict[str, Any]:
        return {"event": "tool", "id": "bash", "timestamp": at, "completed": done}

    sample = {
        "id": "intercode-ctf_general_skills/task_1", "epoch": 1, "input": "Find the flag in /ctf/1.",
        "messages": [
            {"role": "system", "content": "You are a CTF player."},
            {"role": "user", "content": "Find the flag in /ctf/1."},
            {"role": "assistant", "id": "m1", "model": "gemini-2.5-pro", "content": "Look around.",
             "tool_calls": [{"id": "bash", "function": "bash", "arguments": {"cmd": "ls /ctf/1"}},
                            {"id": "bash", "function": "bash", "arguments": {"cmd": "cat /ctf/1/store.c"}}]},
            {"role": "tool", "tool_call_id": "bash", "content": "store.c"},
            {"role": "tool", "tool_call_id": "bash", "content": "",
             "error": {"type": "timeout", "message": "Command timed out before completing."}},
        ],
        "events": [model_event("m1", "2025-06-01T10:00:00+00:00", "2025-06-01T10:00:02+00:00"),
                   tool_event("2025-06-01T10:00:03+00:00", "2025-06-01T10:00:04+00:00"),
                   tool_event("2025-06-01T10:00:04+00:00", "2025-06-01T10:03:04+00:00")],
        "limit": {"type": "message"}, "scores": {"includes": {"value": "I"}},
        "metadata": {"task_family": "general_skills", "human_minutes": 3},
    }
    request = _converter("convert_intercode_ctf").convert_sample("google/gemini-2.5-pro", "r1", sample)
    labels, trace = _replayed(tmp_path / "intercode.otlp.jsonl.gz", request)
    assert labels == ("intercode-ctf", False, "step_limit", True)
    tools = [s for s in trace.spans if classify(s.name, s.attributes) is Kind.TOOL]
    assert [(s.attributes["output.value"], s.status_code) for s in tools] == [
        ("store.c", 1), ("Command timed out before completing.", 2)]
