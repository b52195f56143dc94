"""An agent written on the Traceloop SDK (``Traceloop.init()``, ``@agent`` / ``@tool``, a loop around the OpenAI
client): the breaker attached by ``spanbreaker.instrument()`` on the provider Traceloop set. Each scenario in its own
process (``app.py``); measured on traceloop-sdk 0.62.4 (its own venv: ``make test-traceloop``).

Stock, a decorated tool's span starts bare and is told it is a tool just after: the breaker read the loop only from
the model's prompts (OpenLLMetry's OpenAI instrumentation), let the fifth identical search run, and a trip raised
inside a synchronous ``@agent`` left the agent's span unexported and its context attached to the thread, so the next,
unrelated run was blocked at once. Pinned here: the fifth identical search is vetoed before it runs, content tracing on
or off, sync or async, functions decorated before or after ``spanbreaker.instrument()``; every span is exported once,
the agent's marked with the trip; the next run is a trace of its own.
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
@pytest.mark.parametrize("options", [(), ("--content", "off"), ("--decorate", "before"), ("--asynchronous",),
                                     ("--asynchronous", "--content", "off")])
def test_a_decorated_tool_looping_is_vetoed_before_its_fifth_run(options: tuple[str, ...]) -> None:
    summary = run(*options)
    assert (summary["outcome"], summary["detector"]) == ("stopped", "tool_repeat")
    assert (summary["model_calls"], summary["tool_calls"]) == (5, 4), "the fifth search never ran"
    assert summary["blocked"] == ["search.tool"]
    assert summary["agents_tripped"] == 1, "the trip is on the agent's span too"
    assert_nothing_lost(summary)
    if "off" in options:
        assert summary["inputs"] == 0, "content tracing off: nothing of the calls reached the spans"


@pytest.mark.timeout(150)
@pytest.mark.parametrize("options", [(), ("--asynchronous",), ("--attach", "instrument-first")])
def test_a_trip_leaves_the_next_run_its_own_trace(options: tuple[str, ...]) -> None:
    """The tripped run's synchronous wrappers end their spans and detach their context only on an ``Exception``:
    before, the thread's next run started inside the tripped trace and was blocked at once. The same whether
    ``spanbreaker.instrument()`` comes after ``Traceloop.init()`` or before it (Traceloop then uses its provider)."""
    summary = run("--runs", "2", *options)
    assert summary["runs"] == ["stopped after 5 model calls", "stopped after 10 model calls"]
    assert summary["traces"] == 2 and summary["agents_tripped"] == 2
    assert_nothing_lost(summary)


@pytest.mark.timeout(150)
def test_a_trip_at_a_model_call_inside_a_synchronous_agent_loses_no_span() -> None:
    """``max_model_calls=3``: the fourth request is vetoed at its span's start (OpenLLMetry's OpenAI span, inside the
    ``@agent`` function); the agent's span is ended, marked and exported all the same."""
    summary = run("--script", "healthy", "--max-model-calls", "3", "--runs", "2")
    assert (summary["detector"], summary["blocked"][0]) == ("call_budget", "openai.chat")
    assert summary["runs"] == ["stopped after 3 model calls", "stopped after 6 model calls"]
    assert_nothing_lost(summary)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_tool_budget_vetoes_the_fourth_call(asynchronous: bool) -> None:
    summary = run("--script", "healthy", "--max-tool-calls", "3", *(("--asynchronous",) if asynchronous else ()))
    assert (summary["detector"], summary["tool_calls"], summary["blocked"]) == ("call_budget", 3, ["search.tool"])
    assert_nothing_lost(summary)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("options", [(), ("--asynchronous",), ("--content", "off")])
def test_different_queries_then_an_answer_are_quiet(options: tuple[str, ...]) -> None:
    summary = run("--script", "healthy", *options)
    assert (summary["outcome"], summary["model_calls"], summary["tool_calls"]) == ("answered", 6, 5)
    assert summary["blocked"] == [] and summary["tripped"] == 0
    assert_nothing_lost(summary)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("content", ["on", "off"])
def test_under_the_launcher_an_app_that_knows_nothing_of_spanbreaker_is_stopped(content: str) -> None:
    """``opentelemetry-instrument python app.py``: ``Traceloop.init()`` adds its processors to the provider the launcher
    set (the breaker on it), and the adapter comes with the SDK's import."""
    summary = app_summary(APP, "--attach", "none", "--runs", "2", "--content", content, launcher=True, environment={
        "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"})
    assert summary["runs"] == ["stopped after 5 model calls", "stopped after 10 model calls"]
    assert (summary["detector"], summary["tool_calls"], summary["agents_tripped"]) == ("tool_repeat", 8, 2)
    assert_nothing_lost(summary)
