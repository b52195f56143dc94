"""Convert the Who&When failure logs (MIT) into OTLP/JSON traces with OpenInference attributes.

    git clone https://github.com/ag2ai/Agents_Failure_Attribution
    python corpora/convert_who_and_when.py Agents_Failure_Attribution corpora/data/who-and-when.otlp.jsonl.gz

The source is a git repository (a clone or a bare mirror: files are read with ``git show HEAD:<path>``). Who&When
holds 184 failed runs of two multi-agent systems on GAIA and AssistantBench questions, not coding tasks:

* ``Hand-Crafted/`` - 58 Magentic-One runs (AutoGen: an Orchestrator delegating to WebSurfer, FileSurfer,
  Assistant and ComputerTerminal). Each run is the message log: ``Orchestrator (thought)`` (the orchestrator's
  model output), ``Orchestrator (-> X)`` (its instruction to agent X), X's reply, and where the run was stopped
  by the system an ``Orchestrator (termination condition)`` message (``Max rounds (30) reached``, ``Max time
  (1500s) reached``, ``No agent selected``).
* ``Algorithm-Generated/`` - 126 CaptainAgent group chats (AG2): expert agents take turns and a
  ``Computer_terminal`` runs the code they write.

Shape. Magentic-One: a ``Step N`` per orchestrator turn holding its model calls, and per delegation an AGENT
span for the agent (input = the instruction, output = the reply) holding that agent's model call and, for the
agents that act (WebSurfer, FileSurfer, ComputerTerminal), a TOOL span whose result is the reply (the page,
file or command output it reports). CaptainAgent: a ``Step N`` per expert message (an LLM span on an AGENT span
for the expert); when the terminal answers, a ``code_executor`` TOOL span (input = the code blocks of the message
before, output = the terminal's text, ``exitcode: 1 (execution failed)`` included: AG2's executor returns the
failure as text, it does not raise). Timestamps are synthetic (one second per message); token counts are
estimated (characters / 4): every agent sees the whole conversation, so a model call's prompt is the log so far.

Labels: every run failed (``eval.success`` false: the data set holds failures only); ``eval.end_reason`` from the
termination message (``step_limit``, ``time_limit``, ``no_agent_selected``), else ``final_answer`` when the run
ended on the orchestrator's or an expert's final answer (``TERMINATE``), else ``unknown``. The annotators' blame
(``whowhen.mistake_agent``, ``whowhen.mistake_step``) is kept as a resource attribute.
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
MODEL = "gpt-4o-2024-08-06"  # both systems ran GPT-4o (the termination messages name it)
ACTING_TOOLS = {"WebSurfer": "web_browser", "FileSurfer": "file_browser", "ComputerTerminal": "code_executor"}
_TERMINATION = {"Max rounds": "step_limit", "Max time": "time_limit", "No agent selected": "no_agent_selected"}
_CODE = re.compile(r"```(?:\w+)?\n(.*?)```", re.S)


def _labels(run_id: str, data: dict[str, Any], end_reason: str, system: str) -> dict[str, Any]:
    return {"eval.corpus": "who-and-when", "eval.task_id": run_id, "eval.success": False,
            "eval.end_reason": end_reason, "whowhen.system": system,
            "whowhen.question_id": str(data.get("question_ID", "")),
            "whowhen.mistake_agent": str(data.get("mistake_agent", "")),
            "whowhen.mistake_step": str(data.get("mistake_step", "")),
            "dataset.timestamps": "synthetic", "dataset.token_counts": "estimated_chars_div_4"}


def magentic_one(run_id: str, data: dict[str, Any]) -> dict[str, Any]:
    history = data["history"]
    b = TraceBuilder(f"who-and-when/{run_id}", "Orchestrator", data.get("question", ""), T0)
    t, chars, end_reason = T0, 0, "final_answer"
    step: str | None = None
    agent_replied = True  # the orchestrator's first thought, and each after an agent's reply, opens a step
    instruction: tuple[str, str] | None = None  # (agent, text) awaiting the agent's reply
    for msg in history:
        role, text = msg.get("role", ""), msg.get("content", "") or ""
        t += SECOND
        if role == "Orchestrator (termination condition)":
            end_reason = next((v for k, v in _TERMINATION.items() if text.startswith(k)), "unknown")
        elif role.startswith("Orchestrator"):
            if agent_replied or step is None:
                step, agent_replied = b.step(t, t + SECOND - 1), False
            else:
                b.extend(step, t + SECOND - 1)  # another orchestrator turn in the same step: the step covers it
            b.llm(step, t + 1, t + SECOND // 4, MODEL, estimate_tokens(chars), estimate_tokens(len(text)), text,
                  name="Orchestrator.create")
            if role.startswith("Orchestrator (-> "):
                instruction = (role[len("Orchestrator (-> "):].rstrip(")"), text)
        elif role != "human" and instruction is not None and step is not None:
            agent_name, task = instruction
            b.extend(step, t + SECOND - 1)  # the delegation belongs to the orchestrator's turn
            agent = b.agent(step, t + 1, t + SECOND // 2, agent_name, task, text)
            action = text.split("\n", 1)[0]
            b.llm(agent, t + 2, t + SECOND // 8, MODEL, estimate_tokens(chars), estimate_tokens(len(action)), action,
                  name=f"{agent_name}.create")
            if agent_name in ACTING_TOOLS:
                b.tool(agent, t + SECOND // 8 + 1, t + SECOND // 2 - 1, ACTING_TOOLS[agent_name],
                       {"instruction": task}, text)
            instruction, agent_replied = None, True
        chars += len(text)
    return b.request("magentic-one", _labels(run_id, data, end_reason, "magentic-one"))


def captain_agent(run_id: str, data: dict[str, Any]) -> dict[str, Any]:
    history = data["history"]
    task = history[0].get("content", "") if history else data.get("question", "")
    b = TraceBuilder(f"who-and-when/{run_id}", "CaptainAgent", task, T0)
    t, chars = T0, len(task)
    previous_code: list[str] = []
    step: str | None = None
    for msg in history[1:]:
        name, text = msg.get("name") or msg.get("role") or "agent", msg.get("content", "") or ""
        t += SECOND
        if name == "Computer_terminal" and step is not None:
            b.extend(step, t + SECOND // 2)  # the run of the code the step's message wrote: the step covers it
            b.tool(step, t, t + SECOND // 2, "code_executor", {"code": "\n".join(previous_code)}, text)
        else:
            step = b.step(t, t + SECOND - 1)
            agent = b.agent(step, t + 1, t + SECOND // 2, name, "", text)
            b.llm(agent, t + 2, t + SECOND // 2 - 1, MODEL, estimate_tokens(chars), estimate_tokens(len(text)), text,
                  name=f"{name}.create")
            previous_code = _CODE.findall(text)
        chars += len(text)
    end = "final_answer" if any("TERMINATE" in (m.get("content") or "") for m in history[-2:]) else "unknown"
    return b.request("captain-agent", _labels(run_id, data, end, "captain-agent"))


def convert(repo: str) -> Iterator[dict[str, Any]]:
    listing = git_files(repo, "Who&When")
    files = [p for p in listing if p.endswith(".json")]
    for path in sorted(files, key=lambda p: (p.split("/")[1], int(p.rsplit("/", 1)[1][:-5]))):
        part, number = path.split("/")[1], path.rsplit("/", 1)[1][:-5]
        data = json.loads(git_show(repo, path))
        if part == "Hand-Crafted":
            yield magentic_one(f"hand-crafted/{number}", data)
        else:
            yield captain_agent(f"algorithm-generated/{number}", data)


if __name__ == "__main__":
    sys.exit(cli(convert, "convert_who_and_when.py Agents_Failure_Attribution OUT.otlp.jsonl.gz", sys.argv[1:]))
