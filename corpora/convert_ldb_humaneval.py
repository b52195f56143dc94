"""Convert the LDB (LLM debugger) HumanEval runs of "AI Agents That Matter" (MIT) into OTLP/JSON traces.

    git clone https://github.com/benediktstroebl/agent-evals
    python corpora/convert_ldb_humaneval.py agent-evals corpora/data/ldb-humaneval.otlp.jsonl.gz

The source is a git repository (a clone or a bare mirror: files are read with ``git show HEAD:<path>``). Kapoor,
Stroebl et al., "AI Agents That Matter" (TMLR 2025) re-ran LDB (Zhong et al., "Debug like a Human: A Large Language
Model Debugger via Verifying Runtime Execution Step by Step", ACL 2024) on HumanEval and committed the result logs:
``LLMDebugger/output_data/ldb/humaneval/<seed model>+<debug model>/run<k>/*.jsonl``, one line per problem.

LDB is not a tool-calling chat agent: a fixed harness. A seed program (one plain completion, the ``simple`` strategy)
is run against the problem's visible tests (``given_tests``); while a visible test fails and fewer than 10 debugging
iterations have run, LDB traces the failing test's execution, splits it into basic blocks with the intermediate
variable values, asks the model to mark each block correct or wrong, and asks it for a new program, which is run
against the visible tests again. The hidden HumanEval tests decide ``is_solved``.

What each line records: ``implementations`` (the seed, then every regenerated program), ``test_feedback`` (per
program, the visible tests that failed, each as ``assert ... # Real Execution Output: <value>``; empty when all
passed), ``debug_iter``, ``is_passing`` (visible tests), ``is_solved`` (hidden tests), ``token_nums`` (tokens of the
whole run). The block-by-block verification dialogue is only in the per-run ``.log`` files (not read: their
entries carry no problem id that would tie them safely to a line).

Shape: the harness is the root agent (input = the HumanEval prompt, output = the final program). A ``Step N`` per
program: an LLM span (``LDB.seed`` for the seed, ``LDB.debug`` for a regenerated one; output = the program) and a
TOOL span ``run_visible_tests`` (``program`` = the program just written, ``tests`` = the visible tests; result = the
failed tests with their real outputs, or ``All visible tests passed.``). A run of failing tests is a normal tool
result, not an error status (as aider's ``run_tests``). The program is an argument because it is what the harness
runs: with the tests alone every round would be the same call. Timestamps are synthetic (one second per step). Token
counts: completion tokens estimated from the program (characters / 4); prompt tokens left out (the debugging prompts,
with traces and block verdicts, are not in the lines); ``ldb.token_nums`` keeps the recorded total of the run.

Runs taken: the six configurations where the same model wrote the seed and debugged it (``<m>+<m>``), runs 1 to 5
each (the extra one-off folders ``gpt35_ldb`` / ``gpt4_ldb`` and the ``+reflexion`` seeds are left out).

Labels: ``eval.success`` = ``is_solved``; ``eval.end_reason`` ``step_limit`` when the visible tests still failed after
the 10th debugging iteration, else ``final_answer``. Kept too: ``ldb.model``, ``ldb.run``, ``ldb.debug_iter``,
``ldb.visible_passing``, ``ldb.token_nums``, ``humaneval.task_id``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from otlp_builder import TraceBuilder, cli, estimate_tokens, git_files, git_show

FOLDER = "LLMDebugger/output_data/ldb/humaneval"
MAX_DEBUG_ITERS = 10
T0 = 1_714_000_000_000_000_000  # April 2024, when the runs were made
SECOND = 1_000_000_000
_RUN = re.compile(r"^" + re.escape(FOLDER) + r"/([^/+]+)\+([^/]+)/run(\d+)/[^/]+\.jsonl$")


def _feedback(failed: list[str]) -> str:
    return "\n".join(failed) if failed else "All visible tests passed."


def convert_run(model: str, run: int, item: dict[str, Any]) -> dict[str, Any]:
    task_id = item["task_id"]
    b = TraceBuilder(f"ldb/{model}/run{run}/{task_id}", "LDB", item.get("prompt", ""), T0)
    tests = item.get("given_tests") or []
    programs = item.get("implementations") or []
    feedback = item.get("test_feedback") or []
    t = T0
    for i, program in enumerate(programs):
        t += SECOND
        step = b.step(t, t + SECOND - 1)
        b.llm(step, t + 1, t + SECOND // 2, model, None, estimate_tokens(len(program)), program,
              name="LDB.seed" if i == 0 else "LDB.debug")
        failed = feedback[i] if i < len(feedback) else []
        b.tool(step, t + SECOND // 2 + 1, t + SECOND - 2, "run_visible_tests", {"program": program, "tests": tests},
               _feedback([str(f) for f in failed]))
    debug_iter = int(item.get("debug_iter") or 0)
    passing = bool(item.get("is_passing"))
    end = "step_limit" if not passing and debug_iter >= MAX_DEBUG_ITERS else "final_answer"
    labels = {"eval.corpus": "ldb-humaneval", "eval.task_id": task_id, "eval.success": bool(item.get("is_solved")),
              "eval.end_reason": end, "humaneval.task_id": task_id, "ldb.model": model, "ldb.run": run,
              "ldb.debug_iter": debug_iter, "ldb.visible_passing": passing,
              "ldb.token_nums": int(item.get("token_nums") or 0),
              "dataset.timestamps": "synthetic", "dataset.token_counts": "completion_estimated_chars_div_4"}
    return b.request("ldb", labels, output=item.get("solution") or (programs[-1] if programs else ""))


def convert(repo: str) -> Iterator[dict[str, Any]]:
    for path in sorted(git_files(repo, FOLDER)):
        m = _RUN.match(path)
        if m is None or m.group(1) != m.group(2):
            continue
        model, run = m.group(1), int(m.group(3))
        for line in git_show(repo, path).splitlines():
            if line.strip():
                yield convert_run(model, run, json.loads(line))


if __name__ == "__main__":
    sys.exit(cli(convert, "convert_ldb_humaneval.py agent-evals OUT.otlp.jsonl.gz", sys.argv[1:]))
