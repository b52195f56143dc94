"""Plain OpenAI and Anthropic loops traced by Pydantic Logfire (``logfire.instrument_openai()`` /
``instrument_anthropic()``, logfire 5): its model-call spans start with ``gen_ai.operation.name`` and the request's
``gen_ai.input.messages``, so the breaker reads a loop as it ships, and the sixth request is vetoed before it is sent.

What this tier pins beyond that (measured on logfire 5.4; each scenario in its own process, ``app.py``):
* ``spanbreaker.instrument()`` after ``logfire.configure()`` attaches to the SDK provider inside Logfire's global
  ``ProxyTracerProvider`` (an unhashable dataclass: before, ``instrument()`` raised ``TypeError``).
* With the breaker among Logfire's ``additional_span_processors``, the blocked span is exported and marked: Logfire
  runs every ``on_start`` with instrumentation suppressed and drops an ``on_end`` that arrives so, and the breaker ends
  the blocked span inside ``on_start`` (before, the blocked span was lost).
* A streamed call's response is logged as a record of its own once the stream ends, repeating the request's GenAI
  keys: it is no model call (before, every streamed call counted twice against ``max_model_calls``), and its token
  usage, which the call's own span ends without, counts toward the budgets (before, streamed calls cost nothing).
* Logfire's first message format (``version=1``) records the request body (``request_data``), read as the prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..app_summary import app_summary

APP = Path(__file__).resolve().parent / "app.py"


def run(*args: str) -> dict[str, Any]:
    return app_summary(APP, *args)


@pytest.mark.timeout(150)
@pytest.mark.parametrize(("attach", "api", "span"), [
    ("additional", "chat", True), ("additional", "chat", False), ("instrument", "chat", True),
    ("instrument", "chat", False), ("additional", "chat_stream", True), ("additional", "anthropic", False)])
def test_a_loop_is_stopped_before_the_sixth_request_and_the_blocked_span_is_exported(attach: str, api: str,
                                                                                     span: bool) -> None:
    summary = run("--attach", attach, "--api", api, *(() if span else ("--no-span",)))
    assert (summary["outcome"], summary["detector"]) == ("stopped", "tool_repeat")
    assert (summary["model_calls"], summary["tool_calls"]) == (5, 5)
    if attach == "instrument":
        assert summary["processor"] is True, "processor_for() finds the breaker through Logfire's proxy"
    assert len(summary["blocked"]) == 1 and summary["tripped"] >= 1, "the blocked span reached the exporter, marked"


@pytest.mark.timeout(150)
@pytest.mark.parametrize("api", ["chat", "chat_stream"])
def test_model_calls_are_counted_once(api: str) -> None:
    """``max_model_calls=3``: the fourth request is vetoed; a streamed call's logged response is no second call."""
    summary = run("--api", api, "--script", "healthy", "--max-model-calls", "3")
    assert (summary["outcome"], summary["detector"], summary["model_calls"]) == ("stopped", "call_budget", 3)


@pytest.mark.timeout(150)
@pytest.mark.parametrize(("api", "span"), [("chat", True), ("chat", False), ("chat_stream", True),
                                          ("anthropic", False)])
def test_logfires_first_message_format_is_read_from_its_request_body(api: str, span: bool) -> None:
    """``instrument_*(version=1)`` records the request body (``request_data``) instead of ``gen_ai.input.messages``:
    the loop is read from it (before, 10 of 10 turns ran)."""
    summary = run("--api", api, "--version", "1", *(() if span else ("--no-span",)))
    assert (summary["outcome"], summary["detector"]) == ("stopped", "tool_repeat")
    assert (summary["model_calls"], summary["tool_calls"]) == (5, 5)
    healthy = run("--api", api, "--version", "1", "--script", "healthy", *(() if span else ("--no-span",)))
    assert (healthy["outcome"], healthy["model_calls"], healthy["tripped"]) == ("answered", 6, 0)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("api", ["chat", "chat_stream"])
def test_tokens_are_counted_streamed_or_not(api: str) -> None:
    """``max_tokens=700`` (the scripted model's calls use 140, 260, 380 tokens): the fourth request is vetoed. A
    streamed call's span ends without its usage, which Logfire logs in a record once the stream ends: counted."""
    summary = run("--api", api, "--script", "healthy", "--max-tokens", "700")
    assert (summary["outcome"], summary["detector"], summary["model_calls"]) == ("stopped", "token_budget", 3)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("api", ["chat", "chat_stream", "anthropic"])
def test_different_queries_then_an_answer_are_quiet(api: str) -> None:
    summary = run("--api", api, "--script", "healthy", "--no-span")
    assert (summary["outcome"], summary["model_calls"], summary["tool_calls"]) == ("answered", 6, 5)
    assert summary["blocked"] == [] and summary["tripped"] == 0
