"""Convert the committed Inspect logs of InterCode-CTF runs (cyber-task-horizons) into OTLP/JSON traces.

    git clone https://github.com/sean-peters-au/cyber-task-horizons
    python corpora/convert_intercode_ctf.py cyber-task-horizons corpora/data/intercode-ctf.otlp.jsonl.gz

The source is a git repository (a clone or a bare mirror); the files are read at the pinned commit ``REV`` (HEAD
of July 2025, "finali published results"), not at HEAD, with one ``git cat-file --batch``. The repository holds
the evaluation logs behind Sean Peters' "AI task length horizons in offensive cybersecurity" (June 2025, after
METR's time-horizon method). Taken: ``published/benchmarks/intercode-ctf/inspect_logs/*.eval``, seven Inspect
(``inspect_ai`` 0.3.89) logs, one per model (o3, o4-mini, GPT-3.5 Turbo, Claude 3.5 Sonnet June and October,
Claude 3.5 Haiku, Gemini 2.5 Pro preview), each the 99 InterCode-CTF tasks (picoCTF problems: general skills,
reverse engineering, cryptography, forensics, web, pwn) once. An ``.eval`` file is a zip archive with one
``samples/<family>/task_<n>_epoch_1.json`` per run: ``messages`` (the chat: ``assistant`` with ``tool_calls``,
``tool`` with the result the model saw, or ``error`` = ``{type, message}``), ``events`` (each model call with its
recorded start, end and token usage; each tool call with its start and end), ``scores`` and ``limit``.

The agent is Inspect's ``react()`` (``ctf_agent`` in ``src/human_ttc_eval/datasets/intercode_ctf/
intercode_ctf_bench.py``): tools ``bash`` and ``python_exec`` (180 s timeout each) and ``submit`` (3 attempts),
in a Docker sandbox; a reply without a tool call is answered with a "Please proceed to the next step ..." user
message; the run stops at an accepted submission, or at a reply the harness takes as the answer, or at the
message limit (30 messages, system prompt included).

Shape: the agent is the root (input = the challenge description, output = the last reply's text). A ``Step N``
per model reply holds its LLM span (output = the reply's text, then each tool call as ``name({json args})``;
the recorded start and end of the call and its recorded token usage, read per provider: prompt tokens with
the cached ones, completion tokens with the reasoning or thinking ones) and a TOOL span per tool call
(``tool.name`` = ``bash``, ``python_exec`` or ``submit``; arguments as called, ``{"cmd": ...}``,
``{"code": ...}``, ``{"answer": ...}``; result = what the model saw; an Inspect tool error, ``timeout`` (the 180 s
limit), ``parsing`` (arguments that were not valid JSON) or ``unicode_decode`` (binary output), is an ERROR span
whose result is the error message). Tool calls are paired with their results by id, or by position where the ids
repeat (Gemini's calls all have the id ``bash`` or ``python_exec``).
The harness's "Please proceed" messages are not steps. Timestamps are recorded (Inspect's event times; five
samples ran at once, so runs overlap in time).

Labels: ``eval.success`` = the ``includes`` scorer's verdict (``C``: the task's flag appears in the final
answer). ``eval.end_reason``: ``step_limit`` when Inspect's message limit stopped the run, ``submitted`` when the
last tool call was ``submit``, else ``final_answer``. Kept too: ``inspect.model``, ``inspect.run_id``,
``ctf.family``, ``ctf.human_minutes`` (the data set's expert time estimate), ``inspect.total_time_s``,
``inspect.working_time_s``, ``inspect.limit``.
"""

from __future__ import annotations

import io
import json
import re
import sys
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from otlp_builder import TraceBuilder, cli, estimate_tokens, git_files_at, git_read_all

REV = "5dae06b7950a9ee25322035638a91c991338c304"
FOLDER = "published/benchmarks/intercode-ctf/inspect_logs/"
CORPUS = "intercode-ctf"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SAMPLE = re.compile(r"^samples/(.+)_epoch_(\d+)\.json$")
_ERROR_TYPES = {"timeout": "TimeoutError", "parsing": "ToolParsingError", "unicode_decode": "UnicodeDecodeError",
                "permission": "PermissionError", "file_not_found": "FileNotFoundError"}


def _ns(stamp: str | None) -> int | None:
    """An Inspect ISO timestamp (with its UTC offset) to nanoseconds since the epoch, exactly."""
    if not stamp:
        return None
    return (datetime.fromisoformat(stamp) - _EPOCH) // timedelta(microseconds=1) * 1000


def _text(content: Any) -> str:
    """A message's text: a string, or a list of content blocks (only the ``text`` blocks are what was said)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(block.get("text") or "" for block in content
                   if isinstance(block, dict) and block.get("type") == "text")


def _reply(message: dict[str, Any]) -> str:
    parts = [_text(message.get("content"))]
    for call in message.get("tool_calls") or []:
        parts.append(f"{call.get('function')}({json.dumps(call.get('arguments') or {}, ensure_ascii=False)})")
    return "\n".join(p for p in parts if p)


def _walk(events: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every event, nested ones too (tool events sit under step and subtask events)."""
    for event in events:
        yield event
        yield from _walk(event.get("events") or [])


def _result(call: dict[str, Any], k: int, following: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The tool message answering a call: by its id when the ids are unique, else the k-th that follows."""
    same = [m for m in following if m.get("tool_call_id") == call.get("id")]
    if len(same) == 1:
        return same[0]
    return following[k] if k < len(following) else None


def _tokens(model: str, usage: dict[str, Any]) -> tuple[int, int]:
    """(prompt, completion) from Inspect's usage record, whose fields mean different things per provider:
    Anthropic's ``input_tokens`` leave out the cache reads and writes; OpenAI's include the cached tokens, and
    its ``output_tokens`` the reasoning tokens; Google's ``total_tokens`` also count the thinking tokens, which
    no other field does."""
    get = lambda key: int(usage.get(key) or 0)  # noqa: E731
    if model.startswith("anthropic/"):
        return get("input_tokens") + get("input_tokens_cache_read") + get("input_tokens_cache_write"), \
            get("output_tokens")
    if model.startswith("google/"):
        return get("input_tokens"), max(get("output_tokens"), get("total_tokens") - get("input_tokens"))
    return get("input_tokens"), get("output_tokens")


def convert_sample(model: str, run_id: str, sample: dict[str, Any]) -> dict[str, Any]:
    events = list(_walk(sample.get("events") or []))
    model_events: dict[str, dict[str, Any]] = {}
    for event in events:
        if event.get("event") == "model":
            choices = (event.get("output") or {}).get("choices") or []
            if choices and choices[0].get("message", {}).get("id"):
                model_events[choices[0]["message"]["id"]] = event
    tool_events: dict[str, list[dict[str, Any]]] = {}  # per call id, in order (Gemini's ids repeat: "bash")
    for event in events:
        if event.get("event") == "tool":
            tool_events.setdefault(str(event.get("id")), []).append(event)
    starts = [t for e in events if (t := _ns(e.get("timestamp"))) is not None]
    start = min(starts) if starts else 0
    messages = sample["messages"]
    task = _text(sample.get("input")) if not isinstance(sample.get("input"), list) else \
        next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    b = TraceBuilder(f"{CORPUS}/{model}/{sample['id']}/{sample.get('epoch', 1)}", "react", task, start)
    t = start
    last_reply = ""
    last_tool = ""
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        following = []  # the tool messages answering this reply, in order
        for later in messages[i + 1:]:
            if later.get("role") != "tool":
                break
            following.append(later)
        event = model_events.get(message.get("id")) or {}
        m_start = _ns(event.get("timestamp")) or t + 1
        m_end = _ns(event.get("completed")) or m_start + 1
        reply = _reply(message)
        usage = (event.get("output") or {}).get("usage")
        if usage:
            prompt, completion = _tokens(model, usage)
        else:  # no recorded call (none in this data): estimate from the reply alone
            prompt, completion = None, estimate_tokens(len(reply))
        step = b.step(m_start, m_end)
        b.llm(step, m_start, m_end, message.get("model") or model.split("/", 1)[-1], prompt, completion, reply)
        step_end = m_end
        for k, call in enumerate(message.get("tool_calls") or []):
            result = _result(call, k, following)
            queue = tool_events.get(str(call.get("id"))) or []
            tool_event = queue.pop(0) if queue else {}
            c_start = _ns(tool_event.get("timestamp")) or step_end + 1
            c_end = _ns(tool_event.get("completed")) or c_start + 1
            if result is None:  # the run stopped before the call was run (message limit)
                continue
            error = result.get("error")
            if error:
                output = error.get("message") or _text(result.get("content"))
                err = (_ERROR_TYPES.get(error.get("type"), "ToolError"), output)
            else:
                output, err = _text(result.get("content")), None
            args = call.get("arguments")
            args = args if isinstance(args, dict) else {"input": args}
            b.tool(step, c_start, c_end, call.get("function") or "unknown", args, output, err)
            step_end = max(step_end, c_end)
            last_tool = call.get("function") or ""
        b.extend(step, step_end)
        t = step_end
        text = _text(message.get("content"))
        if text:
            last_reply = text
        if not message.get("tool_calls"):
            last_tool = ""
    limit = (sample.get("limit") or {}).get("type") or ""
    if limit == "message" or limit == "turn":
        end_reason = "step_limit"
    elif limit in ("token", "context"):
        end_reason = "context_limit"
    elif limit in ("time", "working"):
        end_reason = "time_limit"
    elif sample.get("error"):
        end_reason = "unknown"
    elif last_tool == "submit":
        end_reason = "submitted"
    else:
        end_reason = "final_answer"
    score = ((sample.get("scores") or {}).get("includes") or {}).get("value")
    metadata = sample.get("metadata") or {}
    labels = {"eval.corpus": CORPUS, "eval.task_id": str(sample["id"]), "eval.success": score == "C",
              "eval.end_reason": end_reason, "inspect.model": model, "inspect.run_id": run_id,
              "ctf.family": str(metadata.get("task_family") or ""),
              "ctf.human_minutes": float(metadata.get("human_minutes") or 0.0),
              "inspect.total_time_s": float(sample.get("total_time") or 0.0),
              "inspect.working_time_s": float(sample.get("working_time") or 0.0), "inspect.limit": limit,
              "dataset.timestamps": "recorded", "dataset.token_counts": "recorded"}
    return b.request("inspect", labels, last_reply)


def _sample_key(name: str) -> tuple[str, int, int]:
    m = _SAMPLE.match(name)
    assert m is not None
    family, _, number = m.group(1).rpartition("/task_")
    return family, int(number) if number.isdigit() else 0, int(m.group(2))


def convert(repo: str) -> Iterator[dict[str, Any]]:
    listing = git_files_at(repo, REV, FOLDER)
    paths = sorted(p for p in listing if p.endswith(".eval"))
    for _path, body in git_read_all(repo, REV, paths):
        archive = zipfile.ZipFile(io.BytesIO(body))
        header = json.loads(archive.read("header.json"))
        model = header["eval"]["model"]
        run_id = header["eval"].get("run_id") or ""
        names = sorted((n for n in archive.namelist() if _SAMPLE.match(n)),
                       key=lambda n: (_sample_key(n)[1], _sample_key(n)[0], _sample_key(n)[2]))
        for name in names:
            yield convert_sample(model, run_id, json.loads(archive.read(name)))


if __name__ == "__main__":
    sys.exit(cli(convert, "convert_intercode_ctf.py cyber-task-horizons OUT.otlp.jsonl.gz", sys.argv[1:]))
