"""An agent traced by Langfuse (``@observe`` as ``agent`` and ``tool``, Langfuse's OpenAI drop-in for the requests),
the breaker attached by ``spanbreaker.instrument()`` on the provider Langfuse set. Each scenario in its own process
(``app.py``); measured on langfuse 5.0.4 (its own venv: ``make test-langfuse``).

Stock, every observation's span starts bare and is told its type and input just after: the breaker saw no tool call,
no agent and no model call, and a looping agent ran its 30 turns. Pinned here: the fifth identical search is vetoed
before it runs, sync or async; budgets on tool calls, model calls (generations) and tokens (a generation's usage
record); a tool whose input or output Langfuse does not capture still known; every span exported once, the agent's
marked; the next run a trace of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..app_summary import app_summary
from ..decorated_agent import assert_nothing_lost

APP = Path(__file__).resolve().parent / "app.py"


def run(*args: str) -> dict[str, Any]:
    return app_summary(APP, *args)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_looping_tool_observation_is_vetoed_before_its_fifth_run(asynchronous: bool) -> None:
    summary = run("--runs", "2", *(("--asynchronous",) if asynchronous else ()))
    assert (summary["outcome"], summary["detector"]) == ("stopped", "tool_repeat")
    assert summary["runs"] == ["stopped after 5 model calls", "stopped after 10 model calls"]
    assert (summary["tool_calls"], summary["blocked"]) == (8, ["search", "search"]), "each fifth search never ran"
    assert summary["agents_tripped"] == 2 and summary["traces"] == 2
    assert_nothing_lost(summary)


@pytest.mark.timeout(150)
@pytest.mark.parametrize(("limit", "detector", "model_calls", "tool_calls", "blocked"), [
    ("--max-tool-calls", "call_budget", 4, 3, "search"),
    ("--max-model-calls", "call_budget", 3, 3, "OpenAI-generation"),
    ("--max-tokens", "token_budget", 3, 2, "search")])
def test_budgets_count_tool_observations_generations_and_their_usage(limit: str, detector: str, model_calls: int,
                                                                      tool_calls: int, blocked: str) -> None:
    """``max_tool_calls=3`` vetoes the fourth search; ``max_model_calls=3`` the fourth request; ``max_tokens=700``
    (the scripted requests use 140, 260, 380 tokens, read from each generation's usage record) the next call after
    the third request."""
    value = "700" if limit == "--max-tokens" else "3"
    summary = run("--script", "healthy", limit, value)
    assert (summary["detector"], summary["model_calls"], summary["tool_calls"]) == (detector, model_calls, tool_calls)
    assert summary["blocked"] == [blocked] and summary["agents_tripped"] == 1
    assert_nothing_lost(summary)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("asynchronous", [False, True])
def test_different_queries_then_an_answer_are_quiet(asynchronous: bool) -> None:
    summary = run("--script", "healthy", *(("--asynchronous",) if asynchronous else ()))
    assert (summary["outcome"], summary["model_calls"], summary["tool_calls"]) == ("answered", 6, 5)
    assert summary["blocked"] == [] and summary["tripped"] == 0
    assert_nothing_lost(summary)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_tool_whose_input_langfuse_does_not_capture_is_still_known_to_the_breaker(asynchronous: bool) -> None:
    """``@observe(as_type="tool", capture_input=False)``: the span carries no input; the breaker is shown the call
    (read from the decorator's wrapper frame) and vetoes the fifth identical one."""
    summary = run("--capture-input", "off", *(("--asynchronous",) if asynchronous else ()))
    assert (summary["detector"], summary["model_calls"], summary["tool_calls"]) == ("tool_repeat", 5, 4)
    assert summary["inputs"] == 0, "nothing of the calls reached the tool spans"
    healthy = run("--capture-input", "off", "--script", "healthy", *(("--asynchronous",) if asynchronous else ()))
    assert (healthy["outcome"], healthy["tripped"]) == ("answered", 0)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_tool_whose_output_langfuse_does_not_capture_is_still_known_to_the_breaker(asynchronous: bool) -> None:
    """``@observe(as_type="tool", capture_output=False)``: the span carries no output; the breaker is shown the return
    value (read from the decorator's wrapper frame as it ends the span) and vetoes the fifth identical call (before,
    the result was unknown and 30 of 30 ran). Nothing of the results reaches the spans."""
    mode = ("--asynchronous",) if asynchronous else ()
    summary = run("--capture-output", "off", *mode)
    assert (summary["detector"], summary["model_calls"], summary["tool_calls"]) == ("tool_repeat", 5, 4)
    assert summary["outputs"] == 0 and summary["inputs"] == 4
    assert_nothing_lost(summary)
    both = run("--capture-output", "off", "--capture-input", "off", *mode)
    assert (both["detector"], both["tool_calls"], both["inputs"], both["outputs"]) == ("tool_repeat", 4, 0, 0)
    healthy = run("--capture-output", "off", "--script", "healthy", *mode)
    assert (healthy["outcome"], healthy["tripped"], healthy["tool_calls"]) == ("answered", 0, 5)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_loop_whose_tool_is_no_observation_is_read_from_the_recorded_requests(asynchronous: bool) -> None:
    """The tool a plain function: the only record of the loop is each request Langfuse's OpenAI integration records
    (the generation's input, set just after its span starts), shown to the breaker in process as the span starts. The
    request that would read the fifth identical result is vetoed (before, 30 of 30 ran); the healthy run is quiet."""
    mode = ("--asynchronous",) if asynchronous else ()
    summary = run("--tool-observed", "off", *mode)
    assert (summary["detector"], summary["model_calls"], summary["tool_calls"]) == ("tool_repeat", 5, 5)
    assert summary["blocked"] == ["OpenAI-generation"] and summary["agents_tripped"] == 1
    assert_nothing_lost(summary)
    healthy = run("--tool-observed", "off", "--script", "healthy", *mode)
    assert (healthy["outcome"], healthy["tripped"], healthy["model_calls"]) == ("answered", 0, 6)


@pytest.mark.timeout(150)
def test_stock_langfuse_shows_the_breaker_no_call() -> None:
    """The breaker attached without the adapter: the loop runs its 30 turns (what the adapter changes)."""
    summary = run("--adapters", "none")
    assert (summary["outcome"], summary["model_calls"], summary["tool_calls"]) == ("answered", 30, 30)
