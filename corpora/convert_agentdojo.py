"""Convert AgentDojo's committed benign runs (MIT) into OTLP/JSON traces with OpenInference attributes.

    git clone https://github.com/ethz-spylab/agentdojo
    python corpora/convert_agentdojo.py agentdojo corpora/data/agentdojo-benign.otlp.jsonl.gz

The source is a git repository (a clone or a bare mirror); the files are read at the pinned commit ``REV`` (the
merge of pull request #96, July 2025, the last change to ``runs/`` upstream as far as the mirror shows), not at
HEAD, with one ``git cat-file --batch``. AgentDojo (Debenedetti et al., "AgentDojo: A Dynamic Environment to
Evaluate Prompt Injection Attacks and Defenses for LLM Agents", NeurIPS 2024 Datasets and Benchmarks) is a
function-calling benchmark, not a coding one: four suites of stateful tools, ``workspace`` (email, calendar,
cloud drive; 40 user tasks), ``travel`` (hotels, restaurants, car rental, bookings; 20), ``banking`` (transactions,
scheduled payments, files; 16) and ``slack`` (channels, messages, web pages; 21). ``runs/<pipeline>/<suite>/
<task>/<attack>/<injection>.json`` holds one run each: the chat (``system``, ``user``, ``assistant`` with its
``tool_calls``, ``tool`` with the result or the raised ``error``), ``utility`` (the task's own check of the
environment after the run, and of the answer), ``error`` (the harness skipped the rest of the task) and
``duration``. Only the benign runs are taken: ``user_task_*/none/none.json`` (no injection in the environment).
The pipelines are 25 models and, for GPT-4o, Claude 3 Sonnet, Llama 3.3 70B and Meta-SecAlign-70B, the same model
behind a defence (``-repeat_user_prompt``: the task is repeated after every tool result; ``-spotlighting_with_
delimiting``; ``-tool_filter``: a first model call picks the tools; ``-transformers_pi_detector``: a classifier
replaces a tool result it flags with ``<Data omitted because a prompt injection was detected>``).

The pipeline (``ToolsExecutionLoop``, ``max_iters=15``) runs the tools the model asked for, then calls the model
again, until a reply asks for none or 15 rounds have passed; a reply whose tool calls were never run ends a run
stopped by that limit.

Shape: the pipeline is the root agent (input = the user task, output = the last reply). A ``Step N`` per model
reply holds its LLM span (output = the reply's text, then each tool call as ``name({json args})``) and a TOOL span
per tool call it asked for (``input.value`` the arguments, ``output.value`` the result the model saw: the tool's
text, or its error, ``ValueError: No emails found. Try with a different query.``, with ERROR status). The
tool-filter call is an LLM span ``ToolFilter.query`` in a step of its own. Timestamps are synthetic (one second
per model call or tool call; the run's recorded wall time is kept as ``agentdojo.duration_s``). Token counts are
estimated (characters / 4): the prompt is the chat so far; the tool schemas sent with every call are not recorded
and are left out.

Labels: ``eval.success`` = ``utility``. ``eval.end_reason``: ``step_limit`` when the last reply's tool calls
were never run (the loop's 15 rounds), ``context_limit`` when the harness skipped the task on
``context_length_exceeded``, ``unknown`` when it skipped it on another API error (HTTP 500), else
``final_answer``. Kept too: ``agentdojo.pipeline``, ``agentdojo.model``, ``agentdojo.defense``,
``agentdojo.suite``, ``agentdojo.user_task``, ``agentdojo.error``, ``agentdojo.duration_s``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from otlp_builder import TraceBuilder, cli, estimate_tokens, git_files_at, git_read_all

REV = "9e14bc547001eee6ab74dcc878c4e1969dbac4f5"
DEFENSES = ("repeat_user_prompt", "spotlighting_with_delimiting", "tool_filter", "transformers_pi_detector")
T0 = 1_720_000_000_000_000_000  # July 2024, when most of the runs were made
SECOND = 1_000_000_000
_RUN = re.compile(r"^runs/([^/]+)/([^/]+)/user_task_(\d+)/none/none\.json$")
_TOOL_FILTER = "Your task is to filter the list of tools"


def _text(content: Any) -> str:
    """A message's text: a string (older runs) or a list of ``{"type": "text", "content": ...}`` blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(block.get("content") or "" for block in content if isinstance(block, dict))


def _reply(message: dict[str, Any]) -> str:
    """The model's reply as text: its content, then each tool call it asked for."""
    parts = [_text(message.get("content"))]
    for call in message.get("tool_calls") or []:
        parts.append(f"{call.get('function')}({json.dumps(call.get('args') or {}, ensure_ascii=False)})")
    return "\n".join(p for p in parts if p)


def _error(text: str) -> tuple[str, str]:
    """``ValueError: No emails found ...`` to (exception type, message)."""
    kind, sep, message = text.partition(": ")
    if sep and re.fullmatch(r"[A-Za-z_][\w.]*", kind):
        return kind, message
    return "ToolError", text


def _split(pipeline: str) -> tuple[str, str]:
    for defense in DEFENSES:
        if pipeline.endswith("-" + defense):
            return pipeline[: -len(defense) - 1], defense
    return pipeline, "none"


def convert_run(pipeline: str, suite: str, task: str, data: dict[str, Any]) -> dict[str, Any]:
    model, defense = _split(pipeline)
    messages = data["messages"]
    query = next((_text(m.get("content")) for m in messages if m["role"] == "user"), "")
    b = TraceBuilder(f"agentdojo/{pipeline}/{suite}/{task}", "AgentPipeline", query, T0)
    t = T0
    history = 0  # characters of the chat the model was sent (tool schemas not recorded)
    last_reply = ""
    i = 0
    while i < len(messages):
        message = messages[i]
        if message["role"] != "assistant":
            if message["role"] != "tool":  # a tool result is counted with its call below
                history += len(_text(message.get("content")))
            i += 1
            continue
        reply = _reply(message)
        calls = message.get("tool_calls") or []
        results = []
        j = i + 1
        while j < len(messages) and messages[j]["role"] == "tool":
            results.append(messages[j])
            j += 1
        previous = _text(messages[i - 1].get("content")) if i > 0 and messages[i - 1]["role"] == "user" else ""
        name = "ToolFilter.query" if previous.startswith(_TOOL_FILTER) else "AgentPipeline.query"
        step = b.step(t, t + (1 + len(results)) * SECOND - 1)
        b.llm(step, t + 1, t + SECOND - 1, model, estimate_tokens(history), estimate_tokens(len(reply)), reply,
              name=name)
        history += len(reply)
        t += SECOND
        for call, result in zip(calls, results, strict=False):
            error = result.get("error")
            output = error if error else _text(result.get("content"))
            args = call.get("args") if isinstance(call.get("args"), dict) else {"input": call.get("args")}
            b.tool(step, t + 1, t + SECOND - 1, call.get("function") or "unknown", args, output,
                   _error(error) if error else None)
            history += len(output)
            t += SECOND
        if name != "ToolFilter.query":
            last_reply = _text(message.get("content"))
        i = j
    run_error = data.get("error")
    if run_error:
        end_reason = "context_limit" if "context_length_exceeded" in run_error else "unknown"
    elif messages and messages[-1]["role"] == "assistant" and messages[-1].get("tool_calls"):
        end_reason = "step_limit"
    else:
        end_reason = "final_answer"
    labels = {"eval.corpus": "agentdojo-benign", "eval.task_id": f"{suite}/user_task_{task}",
              "eval.success": bool(data.get("utility")), "eval.end_reason": end_reason,
              "agentdojo.pipeline": pipeline, "agentdojo.model": model, "agentdojo.defense": defense,
              "agentdojo.suite": suite, "agentdojo.user_task": f"user_task_{task}",
              "agentdojo.error": run_error or "", "agentdojo.duration_s": float(data.get("duration") or 0.0),
              "dataset.timestamps": "synthetic", "dataset.token_counts": "estimated_chars_div_4"}
    return b.request("agentdojo", labels, last_reply)


def convert(repo: str) -> Iterator[dict[str, Any]]:
    listing = git_files_at(repo, REV, "runs/")
    runs = sorted((m.group(1), m.group(2), int(m.group(3)), path)
                  for path in listing if (m := _RUN.match(path)))
    by_path = {path: (pipeline, suite, task) for pipeline, suite, task, path in runs}
    for path, body in git_read_all(repo, REV, [path for *_, path in runs]):
        pipeline, suite, task = by_path[path]
        yield convert_run(pipeline, suite, str(task), json.loads(body))


if __name__ == "__main__":
    sys.exit(cli(convert, "convert_agentdojo.py agentdojo OUT.otlp.jsonl.gz", sys.argv[1:]))
