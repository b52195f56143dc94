"""Convert aider's SWE-bench Lite chat transcripts (Apache-2.0) into OTLP/JSON traces with OpenInference attributes.

    git clone https://github.com/paul-gauthier/aider-swe-bench
    python corpora/convert_aider.py aider-swe-bench corpora/data/aider-swebench-lite.otlp.jsonl.gz

The source is a git repository (a clone or a bare mirror: files are read with ``git show HEAD:<path>``). Folder
``predictions/multi-models--gpt-4o--openrouter-anthropic-claude-3-opus/`` holds aider's SWE-bench Lite run of May
2024 (aider 0.35, 300 instances, 79 resolved): per instance ``<instance>.md``, the chat transcripts, and
``<instance>.json``, the chosen solution; ``results.json`` lists the resolved instances.

The agent is aider, not a tool-calling agent: the model answers in prose with *SEARCH/REPLACE* edit blocks, aider
applies them, runs flake8 on the edited files and the repository's tests, and sends any failure back to the model
as the next message (a "reflection", at most 3 or 4 per task message). Aider also asks to add the files the model
names to the chat. The harness ran aider up to six times per instance (GPT-4o, then Claude 3 Opus, three rounds),
each time in a fresh checkout, and stopped at the first plausible solution (edits applied, lint and tests clean).

A transcript is one ``# aider chat started at <time>`` section per attempt: ``> `` lines are aider's own output
(settings, token usage, edit results, lint and test output, its questions and the answers the harness gave),
``#### `` lines before the first model call are the task, and the text after each ``> N prompt tokens, M completion
tokens, $C cost`` line is the model's reply to that call.

Shape: the harness is the root agent (input = the issue); each attempt a nested AGENT span ``aider`` with a
``Step N`` per model call: an LLM span (the reply; the recorded token counts) and a TOOL span per action aider took
on that reply, in its order: ``add_files`` (files the model named, added to the chat), ``edit_file`` per
SEARCH/REPLACE block (``path``, ``search``, ``replace``; the result is ``Applied edit to <path>``, or aider's
``SearchReplaceNoExactMatch`` report for that block, then with ERROR status), ``lint`` per flake8 run and
``run_tests`` (``command``; the result is the output aider showed the model). A reply aider could not parse at all
("Bad/missing filename", no edit applied) carries a ``FormatError`` on its step instead. Timestamps are synthetic
(one second per model call or action), each attempt placed at its recorded start time.

Labels: ``eval.success`` from ``results.json`` ``resolved``; ``eval.end_reason`` ``step_limit`` when the last
attempt ended on aider's reflection limit ("Only N reflections allowed, stopping."), else ``submitted`` (the
harness then takes the first plausible solution, or the most plausible one after six attempts).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from otlp_builder import TraceBuilder, cli, git_files, git_show

BASE = "predictions/multi-models--gpt-4o--openrouter-anthropic-claude-3-opus"
SECOND = 1_000_000_000
MAX_TRANSCRIPT_BYTES = 4 * 1024 * 1024
"""Larger transcripts (four, all unresolved) are left out: the snapshot this corpus was first built from lacks
them, and a build from a full clone must give the traces the pinned verdicts hold."""
USAGE = re.compile(r"^> ([\d,]+) prompt tokens, ([\d,]+) completion tokens(?:, \$[\d.]+ cost)?\s*$")
STARTED = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
MODEL = re.compile(r"^> Models: (\S+) with ")
ASKED = re.compile(r"^Allow (?:edits to|creation of new file) (?:File: )?(\S+?)"
                   r"(?: which was not previously added to chat)?\?")
REFLECTION_LIMIT = re.compile(r"^Only \d+ reflections allowed, stopping\.")


@dataclass
class Call:
    """One model call: its recorded usage, the reply and what aider printed after it (``> `` prefix removed)."""
    prompt_tokens: int
    completion_tokens: int
    reply: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)


@dataclass
class Attempt:
    start: str
    model: str = "unknown"
    task: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)


def _quoted(line: str) -> str | None:
    """The text of one of aider's ``> `` lines (markdown's trailing two-space line break removed), else None."""
    if line == ">" or line.startswith("> "):
        text = line[2:]
        return text[:-2] if text.endswith("  ") else text.rstrip()
    return None


def parse(transcript: str) -> list[Attempt]:
    attempts: list[Attempt] = []
    for line in transcript.split("\n"):
        started = STARTED.match(line)
        if started:
            attempts.append(Attempt(started.group(1)))
            continue
        if not attempts:
            continue
        attempt = attempts[-1]
        usage = USAGE.match(line)
        if usage:
            attempt.calls.append(Call(int(usage.group(1).replace(",", "")), int(usage.group(2).replace(",", ""))))
            continue
        if not attempt.calls:  # before the first call: settings, warnings and the task
            model = MODEL.match(line)
            if model:
                attempt.model = model.group(1)
            elif line.startswith("#### ") or line == "####":
                text = line[5:]
                attempt.task.append(text[:-2] if text.endswith("  ") else text.rstrip())
            continue
        lines = attempt.calls[-1].reply
        if line.startswith("#### ") or line == "####":
            last = next((x for x in reversed(lines) if x.strip()), "")
            if _quoted(last) is not None or last.startswith("####"):
                lines.append("####")  # a new user message after aider's output (an interrupted run): not the reply
                continue
        lines.append(line)  # split into reply and aider's output below
    for attempt in attempts:
        for call in attempt.calls:
            call.reply, call.output = _split(call.reply)
    return attempts


def _split(lines: list[str]) -> tuple[list[str], list[str]]:
    """A call's lines as (the reply, aider's output): the output is the trailing run of ``> `` and blank lines, so
    a reply quoting ``> `` lines itself (pytest's failure lines, say) keeps them."""
    i = len(lines)
    while i > 0 and (not lines[i - 1].strip() or _quoted(lines[i - 1]) is not None or lines[i - 1] == "####"):
        i -= 1
    while i < len(lines) and _quoted(lines[i]) is None:  # leading blank lines belong to the reply
        i += 1
    return lines[:i], [q for q in map(_quoted, lines[i:]) if q is not None]


@dataclass
class Block:
    path: str
    search: str
    replace: str


def edit_blocks(reply: list[str]) -> list[Block]:
    """The complete SEARCH/REPLACE blocks of a reply, each with the file named on the line before its fence."""
    blocks: list[Block] = []
    path, i = "", 0
    while i < len(reply):
        if not re.match(r"^<{5,9} SEARCH\s*$", reply[i].strip()):
            i += 1
            continue
        j = i - 1
        while j >= 0 and (not reply[j].strip() or reply[j].strip().startswith(("```", "<source>"))):
            j -= 1
        if j >= 0:
            name = reply[j].strip().strip("`*:#").strip()
            if name and " " not in name:
                path = name
        k = i + 1
        while k < len(reply) and not re.match(r"^={5,9}\s*$", reply[k].strip()):
            k += 1
        m = k + 1
        while m < len(reply) and not re.match(r"^>{5,9} REPLACE\s*$", reply[m].strip()):
            m += 1
        if m >= len(reply):
            break
        blocks.append(Block(path, "\n".join(reply[i + 1:k]), "\n".join(reply[k + 1:m])))
        i = m + 1
    return blocks


def _norm(text: str) -> str:
    return "\n".join(line.strip() for line in text.split("\n") if line.strip())


@dataclass
class Action:
    tool: str
    arguments: dict[str, Any]
    output: str
    error: tuple[str, str] | None = None


def actions(call: Call) -> tuple[list[Action], tuple[str, str] | None, bool]:
    """What aider did with a reply: (tool calls, the step's parse error, whether it hit the reflection limit)."""
    out = call.output
    starts = [i for i, line in enumerate(out)
              if line.startswith(("## Running: ", "Test Script: ", "The LLM did not conform"))
              or REFLECTION_LIMIT.match(line) or line.startswith("Attempt to fix ")]
    starts.append(len(out))

    def region(i: int) -> list[str]:
        return out[i:next(s for s in starts if s > i)]

    result: list[Action] = []
    head = out[:starts[0]]  # file questions and edit results come first
    added: list[str] = []
    for line in head:
        if line.startswith("Add these files to the chat?"):
            result.append(Action("add_files", {"files": added}, "\n".join([*added, line])))
            added = []
        elif line.strip() and " " not in line.strip():
            added.append(line.strip())
    failure = next((region(i) for i in starts[:-1] if out[i].startswith("The LLM did not conform")), None)
    failed: dict[tuple[str, str], str] = {}  # (path, SEARCH text) -> aider's report on that block
    step_error: tuple[str, str] | None = None
    if failure is not None:
        sections = [i for i, line in enumerate(failure) if line.startswith("## SearchReplaceNoExactMatch")]
        for n, i in enumerate(sections):
            end = sections[n + 1] if n + 1 < len(sections) else len(failure)
            text = failure[i:end]
            tail = next((k for k, line in enumerate(text) if line.startswith(("# The other ", "Don't re-send"))),
                        len(text))
            body = text[:tail]
            try:
                s = next(k for k, line in enumerate(body) if re.match(r"^<{5,9} SEARCH", line))
                e = next(k for k, line in enumerate(body) if k > s and re.match(r"^={5,9}\s*$", line))
                path = text[0].rsplit(" lines in ", 1)[-1].strip()
                failed[(path, _norm("\n".join(body[s + 1:e])))] = "\n".join(body).strip()
            except StopIteration:
                continue
        if not sections:  # the reply could not be parsed: nothing was applied
            return result, ("FormatError", "\n".join(failure).strip()), any(REFLECTION_LIMIT.match(x) for x in out)
        step_error = ("FormatError", "\n".join(failure[:sections[0]]).strip())
    applied = {line[len("Applied edit to "):].strip() for line in out if line.startswith("Applied edit to ")}
    asked = {path: line for line in head for path in [_asked_path(line)] if path}
    for block in edit_blocks(call.reply):
        key = (block.path, _norm(block.search))
        if key not in failed:  # the report's copy of the block can differ: match on its first line
            key = next((k for k in failed if k[0] == block.path and k[1].split("\n", 1)[0]
                        == key[1].split("\n", 1)[0]), key)
        prefix = [asked[block.path]] if block.path in asked else []
        if key in failed:  # kept: a block sent twice failed twice
            report = failed[key]
            result.append(Action("edit_file", vars(block), "\n".join([*prefix, report]),
                                 ("SearchReplaceNoExactMatch", report.split("\n", 1)[0])))
        else:
            done = f"Applied edit to {block.path}" if block.path in applied or failure is not None else ""
            result.append(Action("edit_file", vars(block), "\n".join([*prefix, done]).strip()))
    for i in starts[:-1]:
        line = out[i]
        body = [x for x in region(i) if not x.startswith("Attempt to fix ")]
        if line.startswith("## Running: "):
            result.append(Action("lint", {"command": line[len("## Running: "):]}, "\n".join(body[1:]).strip()))
        elif line.startswith("Test Script: "):
            result.append(Action("run_tests", {"command": line[len("Test Script: "):].strip()},
                                 "\n".join(body[1:]).strip()))
    return result, step_error, any(REFLECTION_LIMIT.match(x) for x in out)


def _asked_path(line: str) -> str:
    """The file of an "Allow edits to F ...?" / "Allow creation of new file F?" question, else ""."""
    m = ASKED.match(line)
    return m.group(1) if m else ""


def _ns(stamp: str) -> int:
    return int(datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp()) * SECOND


def convert_run(instance: str, transcript: str, resolved: bool, chosen: dict[str, Any]) -> dict[str, Any]:
    attempts = parse(transcript)
    task = "\n".join(attempts[0].task).strip() if attempts else ""
    t = _ns(attempts[0].start) if attempts else 0
    b = TraceBuilder(f"aider/{instance}", "aider_harness", task, t)
    limited = 0
    hit_limit = False
    last_reply = ""
    for attempt in attempts:
        t = max(t, _ns(attempt.start))
        agent = b.agent(b.root_id, t, t + 1, "aider", "\n".join(attempt.task).strip(), "")
        hit_limit = False
        for call in attempt.calls:
            acts, parse_error, hit_limit = actions(call)
            reply = "\n".join(call.reply).strip()
            last_reply = reply
            step = b.step(t, t + (1 + len(acts)) * SECOND - 1, error=parse_error, parent=agent)
            b.llm(step, t + 1, t + SECOND - 1, attempt.model, call.prompt_tokens, call.completion_tokens, reply,
                  name="Coder.send")
            for n, act in enumerate(acts, start=1):
                b.tool(step, t + n * SECOND, t + (n + 1) * SECOND - 2, act.tool, act.arguments, act.output,
                       act.error)
            t += (1 + len(acts)) * SECOND
            b.extend(agent, t - 1)
            b.set_output(agent, reply)
        limited += hit_limit
    results = chosen.get("all_results") or [chosen]  # every attempt that produced a result, with its cost
    labels = {"eval.corpus": "aider-swebench-lite", "eval.task_id": instance, "eval.success": resolved,
              "eval.end_reason": "step_limit" if hit_limit else "submitted", "swebench.instance_id": instance,
              "aider.attempts": len(attempts), "aider.reflection_limited_attempts": limited,
              "aider.chosen_model": str(chosen.get("model", "none")),
              "aider.cost_usd": round(sum(float(r.get("cost") or 0.0) for r in results), 6),
              "dataset.timestamps": "synthetic", "dataset.token_counts": "recorded"}
    return b.request("aider", labels, last_reply)


def convert(repo: str) -> Iterator[dict[str, Any]]:
    resolved = set(json.loads(git_show(repo, f"{BASE}/results.json"))["resolved"])
    for path in sorted(p for p in git_files(repo, BASE) if p.endswith(".md") and not p.endswith("README.md")):
        instance = path.rsplit("/", 1)[1][: -len(".md")]
        try:
            transcript = git_show(repo, path)
        except subprocess.CalledProcessError:  # a snapshot without its largest files (over 4 MiB)
            print(f"skipped {instance}: transcript not readable", file=sys.stderr)
            continue
        if len(transcript.encode("utf-8")) > MAX_TRANSCRIPT_BYTES:
            print(f"skipped {instance}: transcript over 4 MiB", file=sys.stderr)
            continue
        chosen = json.loads(git_show(repo, f"{BASE}/{instance}.json"))
        yield convert_run(instance, transcript, instance in resolved, chosen)


if __name__ == "__main__":
    sys.exit(cli(convert, "convert_aider.py aider-swe-bench OUT.otlp.jsonl.gz", sys.argv[1:]))
