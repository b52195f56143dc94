"""Convert WorkBench's committed agent runs (MIT) into OTLP/JSON traces with OpenInference attributes.

    git clone https://github.com/olly-styles/WorkBench
    pip install pandas==2.1.4 numpy==1.26.3   # WorkBench's evaluation runs on pandas (its requirements.txt pins)
    python corpora/convert_workbench.py WorkBench corpora/data/workbench.otlp.jsonl.gz

The source is a checkout of the repository (a work tree; a bare mirror is extracted to a temporary folder with
``git archive HEAD``), built from HEAD ``42f1b6d`` (July 2024; ``data/results/`` last changed 2024-03-28). The runs
behind Styles et al., "WorkBench: a Benchmark Dataset for Agents in a Realistic Workplace Setting" (COLM 2024,
arXiv 2405.00823). Licence: MIT (the repository's ``LICENSE``, "Copyright (c) 2024 Mindsdb").

What the run is: LangChain's structured-chat ReAct agent (``STRUCTURED_CHAT_ZERO_SHOT_REACT_DESCRIPTION``,
``max_iterations=20``, ``max_execution_time=120`` s, temperature 0; ``src/evals/utils.py`` ``generate_results``)
on 690 workplace tasks over five sandbox databases: calendar (110 tasks), email (90), web analytics (120), project
management (80), customer relationship manager (80) and multi-domain tasks (210) that combine them. Each reply is a
``Thought`` and a JSON ``Action`` blob naming one tool (``calendar.search_events``, ``email.send_email``, ... and
``company_directory.find_email_address``); the tool's return value is the next ``Observation``. Five models:
GPT-4 (``gpt-4-0125-preview``), GPT-3.5 (``gpt-3.5-turbo-instruct``), Claude 2, Llama 2 70B chat and Mixtral
8x7B instruct, each with only the task's domain tools in the prompt (``domains``), and GPT-4, Claude 2 and Mixtral
also with all 26 tools (``all``; the prompt does not fit GPT-3.5's and Llama 2's windows): 8 runs of each task.
``data/results/<domain>/<model>_<tools>_<date>.csv`` holds one row per run: ``query``, ``function_calls`` (the
actions as ``calendar.delete_event.func(event_id="00000256")`` strings), ``full_response`` (``str()`` of the
agent's result: ``input``, ``output`` and ``intermediate_steps``, a list of ``(AgentAction(tool=..., tool_input=...,
log=...), observation)``) and ``error``.

Labels are not stored: ``eval.success`` is WorkBench's own outcome-centric check, computed here by WorkBench's code
imported from the checkout (``src.evals.utils.calculate_metrics``, as ``scripts/evals/calculate_all_metrics.py``
calls it, against ``data/processed/queries_and_answers/<domain>_queries_and_answers.csv``): the run's function
calls and the ground-truth calls are each executed on fresh sandbox databases and the five resulting tables are
compared (case-insensitive for most fields); a run with a recorded error never counts as correct. That code imports
LangChain for inference; the evaluation only calls each tool's plain function (``tool.func``), so when LangChain
0.1 is not installed its names are stubbed (``_stub_langchain``): the figures are the same with the real one.
``workbench.unwanted_side_effects`` is the same function's ``has_side_effects`` (the databases changed and the
outcome is wrong).

Shape: the agent is the root (input = the task, output = the agent's final answer). A ``Step N`` per
intermediate step holds an LLM span (output = the step's ``log``: the thought and the action blob) and a TOOL span
(``tool.name`` the action's tool, ``input.value`` its ``tool_input`` as keyword arguments, ``output.value`` the
observation as the agent read it, cut at 8 KiB). The tools' own rejections (``Event not found.``, ``Field not
provided.``, ``Board not valid. Please choose from: ...``, ...) are returned as text, not raised; they get ERROR
status (``ToolError``), as does LangChain's reply to an unknown tool name (``InvalidTool``). A run that ended on an
answer has one more step with only the LLM span, whose output is that answer (the reply itself is not recorded).
Timestamps are synthetic (one second per model or tool call). Token counts are estimated (characters / 4): the
prompt is the task and the steps so far; the fixed prompt (tool descriptions, format instructions) is not recorded
and is left out.

``eval.end_reason``: ``step_limit`` when LangChain stopped the agent (``Agent stopped due to iteration limit or time
limit.``) after 20 steps, ``time_limit`` when it stopped it earlier (the 120 s limit), ``context_limit`` for
``Context window exceeded`` (the harness caught the API's error: ``full_response`` is then empty, the steps taken
before are not recorded), ``unknown`` for any other exception that ended the run (a tool raising on bad arguments,
an unparsable reply, an API error: no steps recorded either), else ``final_answer``. ``eval.task_id`` is
``<domain>/<row of the task in its queries file>/<model>/<tools>``, one per run. Kept too: ``workbench.domain``,
``workbench.query_index``, ``workbench.model``, ``workbench.tools``, ``workbench.error``,
``workbench.unwanted_side_effects``, ``workbench.ground_truth_calls``, ``workbench.results_file``.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import importlib
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import types
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from otlp_builder import TraceBuilder, estimate_tokens, write_jsonl_gz

DOMAINS = ("analytics", "calendar", "customer_relationship_manager", "email", "multi_domain", "project_management")
MODELS = {"gpt-4": "gpt-4-0125-preview", "gpt-3.5": "gpt-3.5-turbo-instruct", "claude-2": "claude-2",
          "llama2-70b": "meta-llama/Llama-2-70b-chat-hf", "mistral-8x7B": "mistralai/Mixtral-8x7B-Instruct-v0.1"}
MAX_ITERATIONS = 20
T0 = 1_710_800_000_000_000_000  # March 2024, when the runs were made
SECOND = 1_000_000_000
STOPPED = "Agent stopped due to iteration limit or time limit."
CONTEXT = "Context window exceeded"
_LANGCHAIN = ("langchain.tools", "langchain.agents", "langchain_openai", "langchain_community.chat_models.anthropic",
              "langchain_community.chat_models.anyscale")
_RESULTS = re.compile(r"^(?P<model>.+)_(?P<tools>all|domains)_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d\.csv$")
# the tools' rejections, returned as text (src/tools/*.py); "No events found." and the like are empty results
_TOOL_ERROR = re.compile(r"^(?:.* not (?:found|provided|valid)\b.*|Invalid .*|Missing .*|Please provide all "
                         r"required fields.*|No search parameters provided.*|(?:Value to plot|Plot type) must be .*)$",
                         re.S)
_INVALID_TOOL = re.compile(r"^.+ is not a valid tool, try one of \[.*\]\.$", re.S)


def _stub_langchain() -> None:
    """Stand-ins for the LangChain 0.1 names ``src.evals.utils`` and ``src.tools`` import, when it is absent.

    WorkBench's tools are ``@tool("calendar.create_event")`` functions and its evaluation ``eval``s
    ``calendar.create_event.func(...)``: only ``.func`` and ``.name`` are used. The model and agent classes are
    only used for inference, which the conversion does not run."""
    try:
        for module_name in _LANGCHAIN:
            importlib.import_module(module_name)
        return
    except ImportError:
        pass

    class Tool:
        def __init__(self, name: str, func: Any) -> None:
            self.name, self.func, self.description, self.__module__ = name, func, func.__doc__, func.__module__

    def tool(name: str, return_direct: bool = False) -> Any:
        return lambda func: Tool(name, func)

    def unused(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("LangChain stand-in: inference is not available in the converter")

    names: dict[str, dict[str, Any]] = {  # the modules of _LANGCHAIN and their parents
        "langchain": {}, "langchain.tools": {"tool": tool},
        "langchain.agents": {"initialize_agent": unused, "AgentType": types.SimpleNamespace(
            STRUCTURED_CHAT_ZERO_SHOT_REACT_DESCRIPTION="structured-chat-zero-shot-react-description")},
        "langchain_openai": {"ChatOpenAI": unused, "OpenAI": unused}, "langchain_community": {},
        "langchain_community.chat_models": {}, "langchain_community.chat_models.anthropic": {"ChatAnthropic": unused},
        "langchain_community.chat_models.anyscale": {"ChatAnyscale": unused},
    }
    for module_name, attributes in names.items():
        module = types.ModuleType(module_name)
        module.__dict__.update(attributes)
        sys.modules[module_name] = module


@contextlib.contextmanager
def _checkout(path: str) -> Iterator[Path]:
    """The source as a folder with files: a work tree as it is, a bare mirror extracted from HEAD."""
    root = Path(path)
    if (root / "src" / "evals" / "utils.py").exists():
        yield root.resolve()
        return
    with tempfile.TemporaryDirectory(prefix="workbench-") as tmp:
        archive = subprocess.run(["git", "-C", path, "archive", "--format=tar", "HEAD"], capture_output=True,
                                 check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        yield Path(tmp)


def evaluate(root: Path, files: list[tuple[str, str]]) -> dict[tuple[str, str, str], tuple[bool, bool]]:
    """(domain, results file, query) -> (correct, unwanted side effects), by WorkBench's ``calculate_metrics``.

    Reads each file as ``get_latest_results_from_dir`` does (``dtype=str``, the calls and the ground truth through
    ``ast.literal_eval``). The working directory is the checkout while it runs: the tools read their databases
    from ``data/processed/`` relative to it, at import and at every reset."""
    try:
        import pandas as pd
    except ImportError:
        sys.exit("convert_workbench.py needs pandas to run WorkBench's evaluation: pip install pandas==2.1.4")
    _stub_langchain()
    cwd = os.getcwd()
    sys.path.insert(0, str(root))
    os.chdir(root)
    labels: dict[tuple[str, str, str], tuple[bool, bool]] = {}
    try:
        from src.evals.utils import calculate_metrics
        for domain, name in files:
            predictions = pd.read_csv(os.path.join("data", "results", domain, name), dtype=str)
            ground_truth = pd.read_csv(os.path.join("data", "processed", "queries_and_answers",
                                                    f"{domain}_queries_and_answers.csv"), dtype=str)
            ground_truth["answer"] = ground_truth["answer"].apply(ast.literal_eval)
            predictions["function_calls"] = predictions["function_calls"].apply(ast.literal_eval)
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                df = calculate_metrics(ground_truth, predictions, print_errors=False)
            for query, correct, side_effects in zip(df["query"], df["correct"], df["unwanted_side_effects"],
                                                    strict=True):
                labels[(domain, name, query)] = (bool(correct), bool(side_effects))
    finally:
        os.chdir(cwd)
        sys.path.remove(str(root))
    return labels


def _value(text: str, node: ast.expr) -> Any:
    """A literal as a Python value, anything else (``array(...)``, ``Timestamp(...)``, ``nan``) as its text."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.get_source_segment(text, node) or ""


def _seen(text: str, node: ast.expr) -> str:
    """The observation as the agent read it (``str()`` of the value: a string without its quotes)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ast.get_source_segment(text, node) or ""


def parse_response(text: str) -> tuple[str, list[tuple[str, dict[str, Any], str, str]]]:
    """``full_response`` to (output, [(tool, tool input, log, observation)])."""
    if not text:
        return "", []
    tree = ast.parse(text, mode="eval").body
    assert isinstance(tree, ast.Dict)
    fields = {k.value: v for k, v in zip(tree.keys, tree.values, strict=True) if isinstance(k, ast.Constant)}
    output = fields.get("output")
    answer = str(_value(text, output)) if output is not None else ""
    steps: list[tuple[str, dict[str, Any], str, str]] = []
    listing = fields.get("intermediate_steps")
    for item in listing.elts if isinstance(listing, ast.List) else []:
        assert isinstance(item, ast.Tuple) and isinstance(item.elts[0], ast.Call)
        action = {kw.arg: kw.value for kw in item.elts[0].keywords if kw.arg}
        tool_input = action["tool_input"]
        if isinstance(tool_input, ast.Dict):
            arguments = {str(_value(text, k)) if k is not None else "**": _value(text, v)
                         for k, v in zip(tool_input.keys, tool_input.values, strict=True)}
        else:  # a plain string: LangChain passed it as the tool's first argument
            arguments = {"input": _value(text, tool_input)}
        steps.append((str(_value(text, action["tool"])), arguments, str(_value(text, action["log"])),
                      _seen(text, item.elts[1])))
    return answer, steps


def _tool_error(observation: str) -> tuple[str, str] | None:
    if _INVALID_TOOL.match(observation):
        return "InvalidTool", observation
    if _TOOL_ERROR.match(observation) and len(observation) < 300:
        return "ToolError", observation
    return None


def convert_run(domain: str, index: int, model: str, tools: str, name: str, row: dict[str, str], success: bool,
                side_effects: bool, ground_truth_calls: int) -> dict[str, Any]:
    query, error = row["query"], row["error"]
    answer, steps = parse_response(row["full_response"])
    task = f"{domain}/{index}/{model}/{tools}"
    b = TraceBuilder(f"workbench/{task}", "StructuredChatAgent", query, T0)
    t = T0
    history = len(query)
    for tool, arguments, log, observation in steps:
        step = b.step(t, t + 2 * SECOND - 1)
        b.llm(step, t + 1, t + SECOND - 1, MODELS[model], estimate_tokens(history), estimate_tokens(len(log)), log,
              name="StructuredChatAgent.plan")
        b.tool(step, t + SECOND, t + 2 * SECOND - 2, tool, arguments, observation, _tool_error(observation))
        history += len(log) + len(observation)
        t += 2 * SECOND
    if error == CONTEXT:
        end_reason = "context_limit"
    elif answer == STOPPED:
        end_reason = "step_limit" if len(steps) >= MAX_ITERATIONS else "time_limit"
    elif not row["full_response"]:
        end_reason = "unknown"
    else:
        end_reason = "final_answer"
        step = b.step(t, t + SECOND - 1)
        b.llm(step, t + 1, t + SECOND - 1, MODELS[model], estimate_tokens(history), estimate_tokens(len(answer)),
              answer, name="StructuredChatAgent.plan")
    labels = {"eval.corpus": "workbench", "eval.task_id": task, "eval.success": success,
              "eval.end_reason": end_reason, "workbench.domain": domain, "workbench.query_index": index,
              "workbench.model": model, "workbench.tools": tools, "workbench.error": error,
              "workbench.unwanted_side_effects": side_effects, "workbench.ground_truth_calls": ground_truth_calls,
              "workbench.results_file": f"data/results/{domain}/{name}",
              "dataset.timestamps": "synthetic", "dataset.token_counts": "estimated_chars_div_4"}
    return b.request("workbench", labels, answer)


def _read_csv(path: Path) -> list[dict[str, str]]:
    csv.field_size_limit(sys.maxsize)
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def convert(source: str) -> Iterator[dict[str, Any]]:
    with _checkout(source) as root:
        files = sorted((domain, p.name) for domain in DOMAINS for p in (root / "data" / "results" / domain).iterdir()
                       if _RESULTS.match(p.name))
        labels = evaluate(root, files)
        for domain, name in files:
            m = _RESULTS.match(name)
            assert m is not None
            tasks = _read_csv(root / "data" / "processed" / "queries_and_answers" / f"{domain}_queries_and_answers.csv")
            index = {task["query"]: (i, len(ast.literal_eval(task["answer"]))) for i, task in enumerate(tasks)}
            rows = sorted(_read_csv(root / "data" / "results" / domain / name), key=lambda r: index[r["query"]][0])
            for row in rows:
                success, side_effects = labels[(domain, name, row["query"])]
                i, calls = index[row["query"]]
                yield convert_run(domain, i, m.group("model"), m.group("tools"), name, row, success, side_effects,
                                  calls)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("checkout", help="a WorkBench checkout (a clone, or a bare mirror)")
    parser.add_argument("out", help="the .otlp.jsonl.gz file to write")
    args = parser.parse_args(argv)
    n = write_jsonl_gz(args.out, convert(args.checkout))
    print(f"{n} traces written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
