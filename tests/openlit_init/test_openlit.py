"""OpenLIT (``openlit.init()``): a plain loop around the real OpenAI or Anthropic client, traced by the instrumentation
OpenLIT switches on, with the breaker attached by ``spanbreaker.instrument()``. One process per scenario
(``tests/openlit_init/app.py``: ``openlit.init()`` sets the global provider once); the model is the only stub.

OpenLIT starts each ``chat <model>`` span bare and sets the request when the call returns; its messages leave out an
assistant message that carries only tool calls, so the OpenAI loop never showed which calls were made, and the
Anthropic one only as each call ended. The adapters show the breaker each request as the span starts: the sixth
identical request is vetoed before it is sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

APP = Path(__file__).resolve().parent / "app.py"
pytestmark = pytest.mark.timeout(180)


def run_app(*args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(APP), *args], capture_output=True, text=True, timeout=150)
    assert done.returncode == 0, done.stderr[-3000:]
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return summary


def assert_nothing_lost(summary: dict[str, Any]) -> None:
    assert summary["unique"], "every span exported once"
    assert not summary["current"], "no span left attached to the thread's context"


MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5", "groq": "llama-3.3-70b-versatile",
          "ollama": "llama3.1", "google-genai": "gemini-2.5-flash"}
"""Each client's model in the app: its span is ``chat <model>``."""


@pytest.mark.parametrize("span", [False, True], ids=["no-span", "in-a-span"])
@pytest.mark.parametrize("content", ["on", "off"])
@pytest.mark.parametrize("client", list(MODELS))
def test_the_sixth_identical_request_is_vetoed_before_it_is_sent(client: str, content: str, span: bool) -> None:
    summary = run_app("--client", client, "--content", content, *(["--span"] if span else []))
    assert summary["outcome"] == "stopped" and summary["detector"] == "tool_repeat"
    assert summary["model_calls"] == 5 and summary["tool_calls"] == 5  # the 6th request never reached the model
    assert summary["blocked"] == [f"chat {MODELS[client]}"]
    assert summary["call_spans"] == 6  # the vetoed call's span is exported too, marked
    assert summary["traces"] == (1 if span else 6)
    assert summary["tripped"] == (2 if span else 1)  # the vetoed call's span, and the application's around the loop
    assert_nothing_lost(summary)


@pytest.mark.parametrize(("client", "content"), [("openai", "on"), ("anthropic", "on"), ("anthropic", "off"),
                                               ("groq", "on"), ("ollama", "on"), ("google-genai", "on")])
def test_without_the_adapter_the_loop_runs_on(client: str, content: str) -> None:
    """What the adapters change: the breaker on OpenLIT's spans alone, in a span of the application's. OpenAI's, Groq's
    and Ollama's requests, as OpenLIT records them, never show the tool calls asked for; Anthropic's and Gemini's show
    them only as each call ends, so the sixth call's end opens the breaker and the seventh is vetoed; with content
    capture off, never."""
    other = "openlit_anthropic" if client == "openai" else "openlit_openai"
    summary = run_app("--client", client, "--span", "--content", content, "--frameworks", other)
    if client in ("anthropic", "google-genai") and content == "on":
        assert summary["outcome"] == "stopped" and summary["model_calls"] == 6
    else:
        assert summary["outcome"] == "answered" and summary["model_calls"] == 30
    if client != "groq":  # OpenLIT's Groq spans carry no messages
        assert summary["with_messages"] == (summary["model_calls"] if content == "on" else 0)
    assert_nothing_lost(summary)


def test_openlit_is_not_imported_until_the_application_imports_it() -> None:
    """An application with OpenLIT installed but not in use pays nothing for it at ``spanbreaker.instrument()``."""
    code = "import sys, spanbreaker; spanbreaker.instrument(); print('openlit' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False"


HIDE_CLIENTS = """
import importlib.abc, sys
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("groq", "ollama") or name.startswith("google.genai"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Hide())
"""
"""Makes the Groq, Ollama and Google Gen AI clients look not installed (the tier venv has them all)."""


@pytest.mark.parametrize("order", ["openlit first", "spanbreaker first"])
def test_clients_that_are_not_installed_are_passed_over_quietly(order: str) -> None:
    """An application with OpenLIT and only the OpenAI client: OpenLIT has instrumentations for the others too, and
    spanbreaker's adapters for them used to log a warning with a traceback each ("could not read OpenLIT's Groq
    instrumentation's requests") at every start. Only the clients installed are read."""
    steps = ["import os; os.environ['OTEL_TRACES_EXPORTER'] = 'none'",
             "import openlit; openlit.init(disable_batch=True, disable_metrics=True, disable_events=True)",
             "import spanbreaker; spanbreaker.instrument()"]
    if order == "spanbreaker first":
        steps[1], steps[2] = steps[2], steps[1]
    done = subprocess.run([sys.executable, "-c", HIDE_CLIENTS + "\n".join(steps) + "\nimport groq"],
                          capture_output=True, text=True, timeout=120)
    assert "No module named 'groq'" in done.stderr  # the client really is hidden
    assert "could not read" not in done.stderr and "spanbreaker" not in done.stderr.replace(
        "import spanbreaker", ""), done.stderr[-3000:]


@pytest.mark.parametrize("args", [["--asynchronous"], ["--attach", "instrument-first"], ["--runs", "2"]],
                         ids=["async", "instrument-first", "two-runs"])
def test_the_veto_holds_async_attached_first_and_run_after_run(args: list[str]) -> None:
    summary = run_app(*args)
    assert summary["outcome"] == "stopped" and summary["detector"] == "tool_repeat"
    runs = summary["runs"]
    assert runs[0] == "stopped after 5 model calls"
    if len(runs) == 2:  # the next run is a run of its own: its own five calls, then its own veto
        assert runs[1] == "stopped after 10 model calls" and summary["blocked"] == ["chat gpt-4o-mini"] * 2
    assert_nothing_lost(summary)


@pytest.mark.parametrize("client", list(MODELS))
def test_healthy_research_is_quiet(client: str) -> None:
    summary = run_app("--client", client, "--script", "healthy", "--span")
    assert summary["outcome"] == "answered" and summary["detector"] is None
    assert summary["model_calls"] == summary["queries"] + 1 and summary["tool_calls"] == summary["queries"]
    assert summary["blocked"] == [] and summary["tripped"] == 0
    assert_nothing_lost(summary)


def test_a_model_call_budget_vetoes_the_call_past_it() -> None:
    """OpenLIT's bare span is a model call by its GenAI name at start, so ``max_model_calls=3`` vetoes the fourth."""
    summary = run_app("--script", "healthy", "--span", "--max-model-calls", "3")
    assert summary["outcome"] == "stopped" and summary["detector"] == "call_budget"
    assert summary["model_calls"] == 3 and summary["blocked"] == ["chat gpt-4o-mini"]
    assert_nothing_lost(summary)


def run_framework(app: str, scenario: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(APP.parent / app), "--scenario", scenario, *args], capture_output=True,
                          text=True, timeout=150, env=None if env is None else {**os.environ, **env})
    assert done.returncode == 0, done.stderr[-3000:]
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return summary


def run_smolagents(scenario: str) -> dict[str, Any]:
    return run_framework("smolagents_app.py", scenario)


@pytest.mark.parametrize(("scenario", "detector", "model_calls", "searches"), [
    ("search-storm", "tool_repeat", 5, 5), ("code-repair", "error_loop", 4, 0)])
def test_smolagents_traced_by_openlit_alone_is_stopped(scenario: str, detector: str, model_calls: int,
                                                       searches: int) -> None:
    """smolagents with OpenLIT's instrumentation and no OpenInference: OpenLIT marks each step of a run
    ``invoke_agent {agent} step_{n}``, read as a step of the agent (read as an agent of its own, each step was a
    scope of its own, and a search storm and a code-repair loop each ran to ``max_steps``). The loop is decided as the
    step or tool call ends (OpenLIT records a call only then), and the next model call is vetoed before it is sent."""
    summary = run_smolagents(scenario)
    assert summary["outcome"] == "stopped" and summary["detector"] == detector
    assert summary["model_calls"] == model_calls and summary["searches"] == searches
    assert summary["blocked"] == ["chat gpt-4o-mini"]
    assert summary["unique"] and not summary["current"]


@pytest.mark.parametrize("scenario", ["wide-search", "code-progress"])
def test_smolagents_healthy_look_alikes_are_quiet(scenario: str) -> None:
    """Six different searches, each with its own answer; three failed guesses, then the answer."""
    summary = run_smolagents(scenario)
    assert summary["outcome"] == "answered" and summary["detector"] is None
    assert summary["tripped"] == 0 and summary["blocked"] == []
    assert summary["steps"] == summary["model_calls"]  # every step's model call ran


def test_langgraph_traced_by_openlit_alone_is_stopped() -> None:
    """A LangGraph ReAct agent with OpenLIT's instrumentation and no OpenInference: OpenLIT records a tool run's result
    as the ``str()`` of its ``ToolMessage``, whose ``tool_call_id`` is new every call. Read whole, no two results were
    alike and the loop was caught only by ``low_exploration``, after 11 searches; its content is the result now. The
    fifth identical search's end trips, and the agent node's next run is vetoed."""
    summary = run_framework("langgraph_app.py", "stuck")
    assert summary["outcome"] == "stopped" and summary["detector"] == "tool_repeat"
    assert summary["searches"] == 5 and summary["model_calls"] == 5
    assert summary["blocked"] == ["invoke_agent agent"]
    assert summary["unique"] and not summary["current"]


def test_langgraph_wide_research_is_quiet() -> None:
    summary = run_framework("langgraph_app.py", "wide")
    assert summary["outcome"] == "answered" and summary["detector"] is None
    assert summary["searches"] == summary["topics"] and summary["model_calls"] == summary["topics"] + 1
    assert summary["tripped"] == 0 and summary["blocked"] == []


def test_openai_agents_traced_by_openlit_alone_is_stopped_by_its_loop_not_at_its_start() -> None:
    """The OpenAI Agents SDK with OpenLIT's tracing processor and no OpenInference: OpenLIT wraps the run and each
    turn in an ``invoke_agent`` span that names no agent. Read as agents called "invoke_agent", one agent's turns made
    a delegation chain invoke_agent -> researcher -> invoke_agent, and ``delegation_cycle`` stopped the run at its
    first turn, before any search. Now they are parts of the agent that encloses them: the fifth identical search's
    end trips and the sixth is vetoed before it runs."""
    summary = run_framework("openai_agents_app.py", "stuck")
    assert summary["outcome"] == "stopped" and summary["detector"] == "tool_repeat"
    assert summary["searches"] == 5 and summary["blocked"] == ["execute_tool search"]
    assert summary["unique"] and not summary["current"]


@pytest.mark.parametrize("scenario", ["wide", "handoff"])
def test_openai_agents_healthy_runs_are_quiet(scenario: str) -> None:
    """Six different searches; a triage agent handing the question to the researcher once (a real delegation)."""
    summary = run_framework("openai_agents_app.py", scenario)
    assert summary["outcome"] == "answered" and summary["detector"] is None
    assert summary["tripped"] == 0 and summary["blocked"] == []
    assert summary["searches"] == summary["queries"] - (scenario == "handoff")  # the handoff's result counts as one


# OpenLIT and OpenInference both tracing one framework: an application traced by OpenLIT that installs spanbreaker's
# extra for its framework (which brings OpenInference's instrumentor) and calls ``spanbreaker.instrument()``. Every
# call and step then has two spans: nested (smolagents: OpenLIT's ``execute_tool`` around OpenInference's tool span,
# OpenInference's ``Step N`` around OpenLIT's step), or side by side (LangChain: each instrumentor's callback handler
# parents its own spans). Counted twice, a code agent's three failed guesses before the answer tripped ``error_loop``
# at its second step, a search loop was cut short by ``tool_cycle`` after 3 searches, and budgets ran out at half
# their size (LangGraph: ``max_model_calls=5`` stopped a healthy run after 2 model calls).

BOTH = "--openinference"


@pytest.mark.parametrize(("app", "scenario", "detector", "blocked"), [
    ("smolagents_app.py", "search-storm", "tool_repeat", "SimpleTool"),
    ("langgraph_app.py", "stuck", "tool_repeat", "web_search"),
    ("openai_agents_app.py", "stuck", "tool_repeat", "search")])
def test_a_search_loop_traced_twice_is_stopped_before_the_fifth_repeat(app: str, scenario: str, detector: str,
                                                                      blocked: str) -> None:
    """Each call counted once, judged on OpenInference's span, which shows the arguments as the call starts (OpenLIT's
    shows them as it ends): four identical searches ran, the fifth is blocked before it runs."""
    summary = run_framework(app, scenario, BOTH)
    assert summary["outcome"] == "stopped" and summary["detector"] == detector
    assert summary["searches"] == 4 and summary["model_calls"] == 5
    assert summary["blocked"] == [blocked]
    assert summary["unique"] and not summary["current"]


def test_a_code_repair_loop_traced_twice_is_stopped_after_four_failed_steps() -> None:
    summary = run_framework("smolagents_app.py", "code-repair", BOTH)
    assert summary["outcome"] == "stopped" and summary["detector"] == "error_loop"
    assert summary["model_calls"] == 4 and summary["blocked"] == ["OpenAIModel.generate"]


@pytest.mark.parametrize(("app", "scenario"), [
    ("smolagents_app.py", "wide-search"), ("smolagents_app.py", "code-progress"), ("langgraph_app.py", "wide"),
    ("openai_agents_app.py", "wide"), ("openai_agents_app.py", "handoff")])
def test_healthy_runs_traced_twice_are_quiet(app: str, scenario: str) -> None:
    summary = run_framework(app, scenario, BOTH)
    assert summary["outcome"] == "answered" and summary["detector"] is None
    assert summary["tripped"] == 0 and summary["blocked"] == []


@pytest.mark.parametrize(("app", "scenario"), [("smolagents_app.py", "wide-search"), ("langgraph_app.py", "wide")])
@pytest.mark.parametrize(("budget", "limit", "counted"), [("MAX_MODEL_CALLS", 5, "model_calls"),
                                                          ("MAX_TOOL_CALLS", 4, "searches")])
def test_budgets_count_each_call_traced_twice_once(app: str, scenario: str, budget: str, limit: int,
                                                   counted: str) -> None:
    """A healthy run of 7 model calls and 6 searches under a smaller budget: exactly ``limit`` calls run."""
    summary = run_framework(app, scenario, BOTH, env={f"SPANBREAKER_{budget}": str(limit)})
    assert summary["outcome"] == "stopped" and summary["detector"] == "call_budget"
    assert summary[counted] == limit
    assert summary["unique"] and not summary["current"]
