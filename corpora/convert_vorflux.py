"""Convert the Vorflux SWE-bench Verified trajectories (MIT) into OTLP/JSON traces with OpenInference attributes.

    git clone https://github.com/piyushhhxyz/vorflux-swe-benchmarks
    python corpora/convert_vorflux.py vorflux-swe-benchmarks corpora/data/vorflux-swebench-verified.otlp.jsonl.gz

The source is a git repository (a clone or a bare mirror: files are read with ``git show HEAD:<path>``). Each
``trajs/<instance>.json`` is the run's trajectory as exported from the team's tracing (Laminar): a time-ordered
list of ``llm_call`` entries (the model's reply and the tool calls it asked for), ``tool_call`` entries (tool,
arguments, result) and ``judge_call`` entries (a GPT-5.5 call with its input messages). ``runs.json`` holds
the SWE-bench verdict (``resolved``) per instance.

Shape: one ``Step N`` per ``llm_call`` holding its LLM span and the tool calls that follow it up to the next
model call (parallel tool calls share the step, as smolagents records them); a ``judge_call`` is an LLM span in
the current step. Timestamps are the recorded ones (each span ends where the next entry starts). Token counts are
not recorded by the export: completion tokens are estimated from the reply (characters / 4) and prompt tokens are
left out. A prompt estimate from the run's history (what the shared mini-swe-agent data uses) would be wrong
here: the harness runs sub-agents with their own contexts, interleaved in one export, and caches prompts, so the
estimate would make the token, cost and context detectors trip on the converter's guess. The judge calls' prompts
are recorded, so theirs are estimated from the text.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from otlp_builder import TraceBuilder, cli, estimate_tokens, git_files, git_show

BASE = "evaluation/verified/20250519_vorflux_opus46-code_gpt55h-review"
MODEL = "claude-opus-4-6"  # the harness's main model (CONFIGURATION.md); the export does not say per call


def _ns(stamp: str) -> int:
    """``2026-05-05 12:13:43.317824909`` (UTC, nanoseconds) to nanoseconds since the epoch."""
    whole, _, frac = stamp.partition(".")
    seconds = datetime.strptime(whole, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp()
    return int(seconds) * 1_000_000_000 + int((frac + "000000000")[:9])


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _reply(output: dict[str, Any]) -> str:
    """The model's reply as text: its content, then each tool call it asked for."""
    parts = [output.get("content") or ""]
    for call in output.get("tool_calls") or []:
        fn = call.get("function") or {}
        parts.append(f"{fn.get('name')}({fn.get('arguments')})")
    return "\n".join(p for p in parts if p)


def convert_run(instance: str, entries: list[dict[str, Any]], resolved: bool) -> dict[str, Any]:
    times = [_ns(e["timestamp"]) for e in entries]
    task = ""
    for e in entries:
        if e.get("task_prompt"):
            task = "\n".join(m.get("content", "") for m in e["task_prompt"])
            break
    start = times[0] - 1000 if times else 1_700_000_000_000_000_000
    b = TraceBuilder(f"vorflux/{instance}", "vorflux", task, start)
    step: str | None = None
    for i, e in enumerate(entries):
        t0 = times[i]
        t1 = times[i + 1] - 1 if i + 1 < len(times) and times[i + 1] > t0 else t0 + 1_000_000
        kind = e["type"]
        if kind == "llm_call" or step is None:
            # the step lasts until the next model call
            nxt = next((times[j] for j in range(i + 1, len(entries)) if entries[j]["type"] == "llm_call"), None)
            step_end = (nxt - 1) if nxt is not None and nxt > t0 else max(times[-1] + 1_000_000, t1)
            step = b.step(t0, step_end)
        if kind == "llm_call":
            reply = _reply(e.get("output") or {})
            b.llm(step, t0 + 1, t1, MODEL, None, estimate_tokens(len(reply)), reply, name="LiteLLMModel.generate")
        elif kind == "judge_call":
            # the platform's response post-processor (its prompt says so); the export keeps no reply
            prompt = "\n".join(_text(m.get("content", "")) for m in e.get("input_messages") or [])
            b.llm(step, t0 + 1, t1, e.get("model") or "unknown", estimate_tokens(len(prompt)), 0, "",
                  name="JudgeModel.generate", input_text=prompt)
        elif kind == "tool_call":
            result = _text(e.get("result"))
            arguments = e.get("arguments") if isinstance(e.get("arguments"), dict) else {"input": e.get("arguments")}
            b.tool(step, t0 + 1, t1, e.get("tool") or "unknown", arguments, result)
    labels = {"eval.corpus": "vorflux-swebench-verified", "eval.task_id": instance, "eval.success": resolved,
              "eval.end_reason": "submitted" if entries else "unknown", "swebench.instance_id": instance,
              "dataset.timestamps": "recorded", "dataset.token_counts": "completion_estimated_chars_div_4"}
    return b.request("vorflux", labels)


def convert(repo: str) -> Iterator[dict[str, Any]]:
    runs = {r["instance_id"]: r for r in json.loads(git_show(repo, f"{BASE}/runs.json"))["runs"]}
    listing = git_files(repo, f"{BASE}/trajs")
    for path in sorted(p for p in listing if p.endswith(".json")):
        data = json.loads(git_show(repo, path))
        instance = data["instance_id"]
        yield convert_run(instance, data["trajectory"], bool(runs[instance]["resolved"]))


if __name__ == "__main__":
    sys.exit(cli(convert, "convert_vorflux.py vorflux-swe-benchmarks OUT.otlp.jsonl.gz", sys.argv[1:]))
