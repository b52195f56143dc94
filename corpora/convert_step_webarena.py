"""Convert the SteP WebArena runs of "AI Agents That Matter" (MIT) into OTLP/JSON traces with OpenInference attributes.

    git clone https://github.com/benediktstroebl/agent-evals
    python corpora/convert_step_webarena.py agent-evals corpora/data/step-webarena.otlp.jsonl.gz

The source is a git repository (a clone or a bare mirror); the files are read at the pinned commit ``REV`` (HEAD of
May 2025, the commit ``convert_ldb_humaneval.py`` reads too) through one ``git cat-file --batch``. Folder
``webagents-step/data/webarena/eval/<run>/gpt-4-turbo-2024-04-09/run1/f<date>-<time>/<task id>.json`` holds the
WebArena runs of SteP (Sodhi et al., "SteP: Stacked LLM Policies for Web Actions", COLM 2024) that Kapoor, Stroebl et
al. re-ran for "AI Agents That Matter" (TMLR 2025), with GPT-4-turbo-2024-04-09, June 2024 (``step_full``: all 812
WebArena tasks, one folder per site group, each with its ``eval_openai_agent.yml``) and May 2024
(``step_reddit_unmodified``: the 128 Reddit tasks again, the authors' code without the reproduction's fixes).

SteP is a web-browsing agent: a stack of LLM policies. A site's root policy (``reddit_agent``, ``shopping_agent``,
``shopping_admin_agent``, ``github_agent``, ``maps_agent``) sees the task, the URL and the page's accessibility tree
(the viewport, at most 500 rows) and answers with a reason and one action: a WebArena browser action (``click [id]``,
``type [id] [text] [enter]``, ``scroll [down]``, ``hover [id]``, ``goto [url]``, ``go_back``, ``note [text]``,
``stop [answer]``) or a call of a sub-policy (``find_subreddit [books]``, ``search_order [...]``, ``find_directions
[...]``), which is pushed on the stack and acts with its own prompt until it says ``stop [answer]``; the answer goes
back to the caller. ``note`` runs nothing in the browser. The environment stops the run after 20 browser actions.

The trajectory file lists, in order, every decision the stack made: an entry without ``done`` is a policy-level one
(a sub-policy call, or a ``stop`` that pops a policy), an entry with ``done`` / ``reward`` / ``success`` /
``num_actions`` is a browser action the environment took (the root's final ``stop`` is logged twice: once when the
policy pops, once when the environment takes it; one model call). ``observation`` and ``url`` are the page the
policy saw when it decided, so what an action led to is the next entry's page.

Shape: the root policy is the root agent (input = the task). A ``Step N`` per decision, with its LLM span (output =
the reason, then the action) and, for a browser action, a TOOL span named after the action (``click``, ``type``,
``scroll``, ...; arguments parsed from the brackets: ``element_id``, ``text``, ``press_enter``, ``direction``,
``url``, ``answer``; result = the next page: its URL, then the accessibility tree, cut at 8 KiB by the builder;
``stop``'s result is its answer). A sub-policy call is a nested AGENT span named after the policy (input = the call,
output = the answer it returned) holding that policy's steps; its closing ``stop`` is a step with the LLM span only.
The 21st action, which the environment replaced by ``stop [N/A]``, never ran: its step has the LLM span only.
Timestamps are synthetic (one second per decision). Token counts are estimated (characters / 4): the prompt is the
task, URL, page and the policy's own action history; the policy's few-shot prompt (the same in every call of a
policy) is not recorded and is left out.

Labels: ``eval.success`` = the last entry's ``success`` (WebArena's evaluator: ``reward > 0``). ``eval.end_reason``
``step_limit`` when the environment hit its 20 actions (``num_actions`` 21), ``unknown`` when the trajectory ends
without ``done`` (the harness caught an exception; reward 0), else ``final_answer``. Kept too: ``step.run``,
``step.root_policy``, ``step.folder``, ``step.num_actions``, ``step.sub_policy_calls``, ``webarena.task_id``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from otlp_builder import TraceBuilder, cli, estimate_tokens, git_files_at, git_read_all

REV = "5ce7c0c5f988d5c8b5453bf26d3d8831232ca037"
FOLDER = "webagents-step/data/webarena/eval/"
MODEL = "gpt-4-turbo-2024-04-09"
MAX_ENV_STEPS = 20  # every eval_openai_agent.yml: env.max_env_steps
T0 = 1_717_200_000_000_000_000  # June 2024, when the runs were made
SECOND = 1_000_000_000
_RUN = re.compile(r"^" + re.escape(FOLDER) + r"([^/]+)/[^/]+/run1/(f[\d-]+)/(\d+)\.json$")
_ROOT = re.compile(r"^\s*root_action:\s*'(\w+)'", re.M)
_BRACKETS = re.compile(r"\[(.*?)\]", re.S)
_PARAMS = {"click": ("element_id",), "hover": ("element_id",), "type": ("element_id", "text", "press_enter"),
           "scroll": ("direction",), "goto": ("url",), "stop": ("answer",), "note": ("text",),
           "press": ("key_comb",), "tab_focus": ("tab_index",)}


def parse_action(action: str) -> tuple[str, dict[str, Any]]:
    """``type [12] [pittsburgh] [1]`` to (``type``, {element_id, text, press_enter})."""
    name = re.split(r"[\s\[]", action.strip(), maxsplit=1)[0] or "none"
    values = _BRACKETS.findall(action)
    params = _PARAMS.get(name, ())
    args: dict[str, Any] = {key: value for key, value in zip(params, values, strict=False)}
    if len(values) > len(params):
        args["extra"] = values[len(params):]
    return name, args


def _page(entry: dict[str, Any]) -> str:
    return f"{entry.get('url') or ''}\n{entry.get('observation') or ''}"


def convert_run(run: str, folder: str, root_policy: str, task_id: int, data: dict[str, Any]) -> dict[str, Any]:
    entries = data.get("trajectory") or []
    task = next((e.get("objective") or "" for e in entries if "done" in e), entries[0]["objective"] if entries else "")
    b = TraceBuilder(f"step-webarena/{run}/{task_id}", root_policy, task, T0)
    t = T0
    # The policy stack, mirrored: [policy name, AGENT span id, the step that called it, its action history (chars)].
    stack: list[list[Any]] = [[root_policy, b.root_id, "", 0]]
    calls = 0
    answer = ""
    i = 0
    while i < len(entries):
        entry = entries[i]
        action = entry.get("action") or ""
        reason = entry.get("reason") or ""
        name, agent_span, _, history = stack[-1] if stack else (root_policy, b.root_id, "", 0)
        merged = False
        if "done" not in entry and "stop" in action and len(stack) == 1 and i + 1 < len(entries) \
                and "done" in entries[i + 1] and (entries[i + 1].get("action") or "") == action:
            merged = True  # the root's stop, logged when the policy popped and again when the environment took it
            i += 1
            entry = entries[i]
        reply = f"{reason}\nAction: {action}" if reason else action
        prompt = len(entry.get("objective") or "") + len(_page(entry)) + history
        step = b.step(t, t + SECOND - 1, parent=agent_span)
        b.llm(step, t + 1, t + SECOND // 4, MODEL, estimate_tokens(prompt), estimate_tokens(len(reply)), reply,
              name=f"{name}.predict_action")
        for _, span, caller, _ in stack[1:]:  # an open sub-policy and the step that called it end after this one
            b.extend(span, t + SECOND - 1)
            b.extend(caller, t + SECOND - 1)
        if stack:
            stack[-1][3] += len(action) + 1
        following = entries[i + 1] if i + 1 < len(entries) else None
        if "done" in entry:  # a browser action the environment took (or replaced by stop at the limit)
            tool, args = parse_action(action)
            if (entry.get("num_actions") or 0) <= MAX_ENV_STEPS:
                if tool == "stop":
                    result = args.get("answer", "")
                    answer = result
                elif following is not None:
                    result = _page(following)
                else:
                    result = ""  # the harness caught an exception before the next page was read
                b.tool(step, t + SECOND // 4 + 1, t + SECOND - 2, tool, args, result)
            if merged or (len(stack) == 1 and "stop" in action):
                stack.pop()
        elif "stop" in action:  # a sub-policy returns its answer to the caller
            returned = _BRACKETS.search(action)
            if agent_span != b.root_id:
                b.set_output(agent_span, returned.group(1) if returned else "")
            if stack:
                stack.pop()
        else:  # a sub-policy call: a nested agent holding the sub-policy's steps
            calls += 1
            policy = action.split()[0] if action.split() else "policy"
            sub = b.agent(step, t + SECOND // 4 + 1, t + SECOND - 1, name=policy, task=action, output="")
            stack.append([policy, sub, step, 0])
        t += SECOND
        i += 1
    last = entries[-1] if entries else {}
    env = [e for e in entries if "done" in e]
    num_actions = int(env[-1].get("num_actions") or 0) if env else 0
    if last.get("done") is not True:
        end_reason = "unknown"
    elif num_actions > MAX_ENV_STEPS:
        end_reason = "step_limit"
    else:
        end_reason = "final_answer"
    labels = {"eval.corpus": "step-webarena", "eval.task_id": f"webarena/{task_id}",
              "eval.success": bool(last.get("success")), "eval.end_reason": end_reason,
              "step.run": run, "step.root_policy": root_policy, "step.folder": folder,
              "step.num_actions": num_actions, "step.sub_policy_calls": calls, "webarena.task_id": task_id,
              "dataset.timestamps": "synthetic", "dataset.token_counts": "estimated_chars_div_4"}
    return b.request("step-webarena", labels, answer)


def convert(repo: str) -> Iterator[dict[str, Any]]:
    listing = git_files_at(repo, REV, FOLDER)
    configs = [p for p in listing if p.endswith("/eval_openai_agent.yml")]
    roots = {}
    for path, body in git_read_all(repo, REV, configs):
        match = _ROOT.search(body.decode())
        if not match:
            raise RuntimeError(f"{path}: no root_action")
        roots[path.rsplit("/", 1)[0]] = match.group(1)
    runs = sorted((m.group(1), int(m.group(3)), m.group(2), path) for path in listing if (m := _RUN.match(path)))
    seen = set()
    for run, task_id, _, _ in runs:
        if (run, task_id) in seen:
            raise RuntimeError(f"{run}/{task_id}: two trajectories")
        seen.add((run, task_id))
    by_path = {path: (run, task_id, folder) for run, task_id, folder, path in runs}
    for path, body in git_read_all(repo, REV, [path for *_, path in runs]):
        run, task_id, folder = by_path[path]
        yield convert_run(run, folder, roots[path.rsplit("/", 1)[0]], task_id, json.loads(body))


if __name__ == "__main__":
    sys.exit(cli(convert, "convert_step_webarena.py agent-evals OUT.otlp.jsonl.gz", sys.argv[1:]))
