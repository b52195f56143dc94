"""Convert CodeR's SWE-bench Lite trajectories into OTLP/JSON traces with OpenInference attributes.

    git clone https://github.com/NL2Code/CodeR
    python corpora/convert_coder.py CodeR corpora/data/coder-swebench-lite.otlp.jsonl.gz

The repository has no licence, so the converted data is not redistributed: build it locally (``make corpora``).

The source is a git repository (a clone or a bare mirror: files are read with ``git show HEAD:<path>``). CodeR
(Chen et al., 2024) is a multi-agent system built on SWE-agent's interface: a Manager picks a plan (a task
graph) and hands the issue to Reproducer, Debugger, Programmer and Tester agents in turn; each works in the
SWE-agent shell (``open``, ``goto``, ``edit``, ``search_file``, ``python ...``) until it says ``succeed`` or
``fail``; the Manager then submits or re-plans. ``trajs/<instance>.traj`` holds the actions in order
(``trajectory``: action, observation, model response) and each agent's conversation (``history``, with an
``agent`` field); ``results.json`` lists the resolved instances.

Shape: the Manager is the root agent, one ``Step N`` per Manager turn (a ``plan`` or the final ``submit``). Each
hand-off is a nested AGENT span for the role (input = the issue, output = its last reply) with a ``Step N`` per
action: an LLM span (the model's response) and a TOOL span (``tool.name`` = the SWE-agent command, ``bash`` for
plain shell commands; arguments = the rest of the action; result = the observation). ``succeed`` / ``fail``
end the role: model output, no tool call. Token counts are estimated (characters / 4) from the conversation of
the agent that made the call (each role has its own); ``coder.tokens_sent`` / ``coder.api_calls`` keep the
recorded totals. Timestamps are synthetic (one second per action).

Labels: ``eval.success`` from ``results.json`` ``resolved``; ``eval.end_reason`` ``cost_limit`` when the run
hit SWE-agent's per-instance cost limit (an ``exit_cost`` action: the harness then auto-submits, which is why
``info.exit_status`` still says ``submitted``), else ``submitted``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from otlp_builder import TraceBuilder, cli, estimate_tokens, git_files, git_show

T0 = 1_700_000_000_000_000_000
SECOND = 1_000_000_000
MODEL = "gpt-4-1106-preview"  # CodeR's paper runs GPT-4 (1106) on SWE-bench Lite
COMMANDS = {"open", "goto", "scroll_down", "scroll_up", "search_file", "search_dir", "find_file", "edit", "create",
            "submit", "exit_cost", "stackoverflow_search", "similar_issue_search"}
ROLE_END = {"succeed", "fail"}


def _tool(action: str) -> tuple[str, dict[str, Any]]:
    """(tool name, arguments) of a SWE-agent action: its command, or ``bash`` for a shell command line."""
    text = action.strip()
    head = text.split("\n", 1)[0].split(" ", 1)[0]
    if head in COMMANDS or head.startswith("rover_"):
        return head, {"args": text[len(head):].strip()}
    return "bash", {"command": text}


def _resolved(repo: str) -> set[str]:
    text = re.sub(r",\s*([\]}])", r"\1", git_show(repo, "results.json"))  # the file has trailing commas
    return set(json.loads(text)["resolved"])


def _prompts(history: list[dict[str, Any]]) -> dict[str, list[int]]:
    """Per agent, the characters of its own conversation before each of its replies (the prompt it was sent)."""
    seen: dict[str, int] = {}
    prompts: dict[str, list[int]] = {}
    for msg in history:
        agent = msg.get("agent") or "Manager"
        if msg.get("role") == "assistant":
            prompts.setdefault(agent, []).append(seen.get(agent, 0))
        seen[agent] = seen.get(agent, 0) + len(msg.get("content") or "")
    return prompts


def _roles(history: list[dict[str, Any]]) -> list[str]:
    """The roles in the order they were handed the issue (each starts with its own system message)."""
    return [msg.get("agent") or "agent" for msg in history
            if msg.get("role") == "system" and msg.get("agent") != "Manager"]


def convert_run(instance: str, data: dict[str, Any], resolved: bool) -> dict[str, Any]:
    history, actions = data.get("history") or [], data.get("trajectory") or []
    task = next((m.get("content", "") for m in history if m.get("role") == "user"), "")
    b = TraceBuilder(f"coder/{instance}", "Manager", task, T0)
    prompts, roles = _prompts(history), _roles(history)
    used: dict[str, int] = {}

    def prompt_tokens(agent: str) -> int:
        k = used.get(agent, 0)
        used[agent] = k + 1
        chars = prompts.get(agent, [])
        return estimate_tokens(chars[k] if k < len(chars) else (chars[-1] if chars else 0))

    t = T0
    manager_step: str | None = None
    role: tuple[str, str] | None = None  # (name, AGENT span id) of the role at work
    role_steps: list[str] = []
    for entry in actions:
        action, observation = entry.get("action") or "", entry.get("observation") or ""
        response = entry.get("response") or entry.get("thought") or ""
        command = action.strip().split(maxsplit=1)[0] if action.strip() else ""
        if command == "exit_cost":  # written by the harness when the cost limit is hit, not by the model
            continue
        t += SECOND
        if command in ("plan", "submit") or manager_step is None:
            role = None
            manager_step = b.step(t, t + SECOND - 1)
            b.llm(manager_step, t + 1, t + SECOND // 4, MODEL, prompt_tokens("Manager"),
                  estimate_tokens(len(response)), response, name="Manager.generate")
            if command == "submit":
                b.tool(manager_step, t + SECOND // 4 + 1, t + SECOND // 2, "submit", {}, observation)
            continue
        if role is None and manager_step is not None:
            name = roles.pop(0) if roles else "Role"
            role = (name, b.agent(manager_step, t, t + SECOND - 1, name, task, ""))
            role_steps = []
        if role is None:  # an action before any plan: the Manager's own
            role = ("Manager", b.root_id)
        name, agent_span = role
        step = b.step(t, t + SECOND - 1, parent=agent_span)
        role_steps.append(step)
        b.llm(step, t + 1, t + SECOND // 4, MODEL, prompt_tokens(name), estimate_tokens(len(response)), response,
              name=f"{name}.generate")
        if command in ROLE_END:
            b.set_output(agent_span, response)
            role = None
        else:
            tool, arguments = _tool(action)
            b.tool(step, t + SECOND // 4 + 1, t + SECOND - 2, tool, arguments, observation)
        if agent_span != b.root_id:
            b.extend(agent_span, t + SECOND - 1)
        if manager_step is not None:
            b.extend(manager_step, t + SECOND - 1)
    cost_limit = any((e.get("action") or "").strip().startswith("exit_cost") for e in actions)
    stats = (data.get("info") or {}).get("model_stats") or {}
    labels = {"eval.corpus": "coder-swebench-lite", "eval.task_id": instance, "eval.success": resolved,
              "eval.end_reason": "cost_limit" if cost_limit else "submitted", "swebench.instance_id": instance,
              "coder.tokens_sent": int(stats.get("tokens_sent") or 0),
              "coder.api_calls": int(stats.get("api_calls") or 0),
              "dataset.timestamps": "synthetic", "dataset.token_counts": "estimated_chars_div_4"}
    return b.request("coder", labels)


def convert(repo: str) -> Iterator[dict[str, Any]]:
    resolved = _resolved(repo)
    for path in sorted(p for p in git_files(repo, "trajs") if p.endswith(".traj")):
        instance = path.rsplit("/", 1)[1][: -len(".traj")]
        yield convert_run(instance, json.loads(git_show(repo, path)), instance in resolved)


if __name__ == "__main__":
    sys.exit(cli(convert, "convert_coder.py CodeR OUT.otlp.jsonl.gz", sys.argv[1:]))
