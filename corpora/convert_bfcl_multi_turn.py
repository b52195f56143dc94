"""Convert BFCL v4 multi-turn runs (gpt-oss-120b / -20b served by vLLM) into OTLP/JSON traces.

    git clone https://github.com/bbrowning/bfcl-vllm-results
    python corpora/convert_bfcl_multi_turn.py bfcl-vllm-results corpora/data/bfcl-multi-turn.otlp.jsonl.gz

The source is a git repository (a clone or a bare mirror); the files are read at the pinned commit ``REV``
(2025-11-19, HEAD of the fetched snapshot) with one ``git cat-file --batch``. The repository holds the
Berkeley Function Calling Leaderboard's own output files (``bfcl_eval``, BFCL v4) for OpenAI's gpt-oss models
served by vLLM under several vLLM builds: ``results/<run>/result/<model>/multi_turn/BFCL_v4_multi_turn_<category>
_result.json`` (one JSON line per test: ``inference_log``, and per model call ``input_token_count``,
``output_token_count``, ``latency``) and ``results/<run>/score/<model>/multi_turn/BFCL_v4_multi_turn_<category>
_score.json`` (a summary line, then one line per FAILED test; a test not listed passed). Taken: the
``base``, ``miss_func`` and ``miss_param`` categories, 200 tests each, of every run and model committed (seven
run x model pairs); ``long_context`` is left out (its files are absent from the snapshot).

BFCL multi-turn is a conversational tool-use benchmark: a scripted user asks for something in each of 1 to 8
turns (file system, Twitter-like posting, messaging, ticketing, trading, travel booking, vehicle control, math
APIs, all stateful Python classes); within a turn the model calls functions (native function calling, several
per reply allowed) and reads each result, until it answers without a call, which ends the turn; the next user
message follows. ``miss_param`` withholds a needed parameter until a later user turn (the model should ask);
``miss_func`` withholds a needed function until a later turn adds it. BFCL stops a turn after 20 model calls
("Model has been forced to quit after 20 steps.") and then ends the whole run. The check (``valid``) compares,
after each turn, the environment's state and the calls' results with the ground-truth calls' ones.

Shape: the harness is the root agent (input = the first user message, output = empty: the model's text replies
are not recorded, only its calls). A ``Step N`` per model call with its LLM span (output = the decoded calls,
``name(arg=value)`` one per line, or empty for the reply that ends a turn; the first call of each user turn
carries that user message as ``input.value``; recorded prompt and completion tokens of the call) and a TOOL span
per call (``input.value`` = the JSON arguments, ``output.value`` = the result the model saw). Results that are
errors get ERROR status: ``{"error": ...}`` returned by the API (``ToolError``) and ``Error during execution:
...`` (an exception, ``ExecutionError``). A reply whose calls BFCL could not decode ("Error decoding the model
response. Proceed to next turn.") runs nothing: its step carries a ``FormatError``. The state snapshots between
turns are left out. Timestamps are synthetic, but each LLM span lasts its recorded ``latency``; tool calls get
10 ms each.

Labels: ``eval.success`` = not in the score file's failures. ``eval.end_reason`` ``step_limit`` when a turn was
forced to quit after 20 steps, else ``final_answer``. Tests whose inference crashed (a ``traceback`` line and no
log) are left out. Kept too: ``bfcl.run``, ``bfcl.model``, ``bfcl.category``, ``bfcl.turns``,
``bfcl.error_type`` (the score file's, for failures), ``bfcl.latency_s`` (the model calls' recorded sum).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from otlp_builder import TraceBuilder, cli, estimate_tokens, git_files_at, git_read_all

REV = "f98223aef4e7a560e2d2d69849dfb04eed260a52"
CATEGORIES = ("base", "miss_func", "miss_param")
T0 = 1_762_905_600_000_000_000  # 2025-11-12, the day most runs were made
SECOND = 1_000_000_000
TOOL_NS = 10_000_000
_RESULT = re.compile(r"^results/([^/]+)/result/([^/]+)/multi_turn/BFCL_v4_multi_turn_(\w+?)_result\.json$")
_FORCED = "Model has been forced to quit"
_DECODE_ERROR = "Error decoding the model response"
_EXEC_ERROR = "Error during execution: "


def _args(raw: Any) -> dict[str, Any]:
    """A call's JSON arguments as kwargs (kept whole when they do not parse as an object)."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {"input": raw}
    return value if isinstance(value, dict) else {"input": value}


def _decoded(name: str, kwargs: dict[str, Any]) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"


def _error(result: str) -> tuple[str, str] | None:
    if result.startswith(_EXEC_ERROR):
        return "ExecutionError", result[len(_EXEC_ERROR):]
    if result.startswith('{"error"'):
        try:
            value = json.loads(result)
        except ValueError:
            return "ToolError", result
        if isinstance(value, dict) and "error" in value:
            return "ToolError", str(value["error"])
    return None


def _at(counts: Any, turn: int, step: int) -> Any:
    try:
        return counts[turn][step]
    except (IndexError, KeyError, TypeError):
        return None


def convert_run(run: str, model: str, category: str, data: dict[str, Any],
                failure: dict[str, Any] | None) -> dict[str, Any]:
    turns = [entry for entry in data["inference_log"] if isinstance(entry, dict)]
    queries = ["\n".join(m.get("content") or "" for m in turn.get("begin_of_turn_query") or []) for turn in turns]
    model_name = model.split("_", 1)[-1]
    b = TraceBuilder(f"bfcl/{run}/{model}/{data['id']}", "BFCLAgent", queries[0] if queries else "", T0)
    t = T0
    end_reason = "final_answer"
    latency_total = 0.0
    history = 0  # characters seen so far, for the estimate when a call's tokens are missing
    for turn_index, turn in enumerate(turns):
        steps = sorted((k for k in turn if k.startswith("step_")), key=lambda k: int(k[5:]))
        history += len(queries[turn_index])
        for step_index, key in enumerate(steps):
            messages = turn[key]
            calls = [(name, _args(raw)) for m in messages if m["role"] == "assistant"
                     for call in (m.get("content") or []) if isinstance(call, dict) for name, raw in call.items()]
            results = [m.get("content") or "" for m in messages if m["role"] == "tool"]
            logs = [m for m in messages if m["role"] == "handler_log"]
            decode_error = next((m for m in logs if m["content"].startswith(_DECODE_ERROR)), None)
            if any(m["content"].startswith(_FORCED) for m in logs):
                end_reason = "step_limit"
            reply = "\n".join(_decoded(name, kwargs) for name, kwargs in calls)
            latency = _at(data.get("latency"), turn_index, step_index)
            duration = int(float(latency) * SECOND) if isinstance(latency, (int, float)) else SECOND
            latency_total += float(latency) if isinstance(latency, (int, float)) else 0.0
            prompt = _at(data.get("input_token_count"), turn_index, step_index)
            completion = _at(data.get("output_token_count"), turn_index, step_index)
            if not isinstance(prompt, int):
                prompt = estimate_tokens(history)
            if not isinstance(completion, int):
                completion = estimate_tokens(len(reply))
            step_error = None
            if decode_error is not None:
                step_error = ("FormatError", f"{decode_error['content']} {decode_error.get('error', '')}".strip())
            executed = [] if decode_error is not None else list(zip(calls, results, strict=False))
            end = t + duration + len(executed) * TOOL_NS + 2
            step = b.step(t, end, error=step_error)
            b.llm(step, t + 1, t + duration, model_name, prompt, completion, reply, name="BFCLAgent.query",
                  input_text=queries[turn_index] if step_index == 0 else None)
            history += len(reply)
            t += duration + 1
            for (name, kwargs), result in executed:
                b.tool(step, t, t + TOOL_NS - 1, name, kwargs, result, _error(result))
                history += len(result)
                t += TOOL_NS
            t = end + 1
    labels = {"eval.corpus": "bfcl-multi-turn", "eval.task_id": data["id"], "eval.success": failure is None,
              "eval.end_reason": end_reason, "bfcl.run": run, "bfcl.model": model_name,
              "bfcl.category": category, "bfcl.turns": len(turns),
              "bfcl.error_type": (failure or {}).get("error", {}).get("error_type", "") if failure else "",
              "bfcl.latency_s": round(latency_total, 3),
              "dataset.timestamps": "synthetic", "dataset.token_counts": "recorded"}
    return b.request("bfcl", labels, "")


def _lines(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in body.decode().splitlines() if line.strip()]


def convert(repo: str) -> Iterator[dict[str, Any]]:
    listing = git_files_at(repo, REV, "results/")
    sources = sorted((m.group(1), m.group(2), m.group(3), path) for path in listing
                     if (m := _RESULT.match(path)) and m.group(3) in CATEGORIES)
    for run, model, category, path in sources:
        score_path = path.replace("/result/", "/score/", 1).replace("_result.json", "_score.json")
        (_, result_body), (_, score_body) = git_read_all(repo, REV, [path, score_path])
        score = _lines(score_body)
        failures = {line["id"]: line for line in score[1:]}
        results = _lines(result_body)
        if len(results) != score[0]["total_count"] or len(results) - len(failures) != score[0]["correct_count"]:
            raise RuntimeError(f"{path}: {len(results)} results, {len(failures)} failures do not match {score[0]}")
        for data in results:
            if "inference_log" not in data:
                continue  # the inference crashed (a traceback, no steps)
            yield convert_run(run, model, category, data, failures.get(data["id"]))


if __name__ == "__main__":
    sys.exit(cli(convert, "convert_bfcl_multi_turn.py bfcl-vllm-results OUT.otlp.jsonl.gz", sys.argv[1:]))
