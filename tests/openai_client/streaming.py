"""Streamed Chat Completions under an instrumentor, the checks every instrumentor's suite runs on its own rig.

A streaming application sends ``stream=True`` and reads the reply chunk by chunk: the model call's span starts with
the request and ends only when the stream is read to its end (the usage, and so the token counts, come in the last
chunk). The breaker must stop a loop of streamed calls where it stops one of plain calls, before the request that
would carry the repeated result is sent; take the token counts the stream ended with; lose no span; and stay quiet
on a streamed feed that brings news each time.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import spanbreaker
from spanbreaker.signals import Kind

from ..genai_rig import Rig
from .loop import astreamed_chat_completion, run_async_loop, run_loop, streamed_chat_completion
from .scripted import Reply, ScriptedModel, tool_results

SAME_PAGE = "Acme: guidance will be published in March."
NEWS = [f"Acme item {n}: {topic}" for n, topic in enumerate(
    ["a plant in Ohio", "a merger approved", "a scooter recall", "a pilots' deal", "weak sales", "a new chief",
     "a rail contract", "a patent settled", "a dividend cut", "a cheaper phone", "a delayed satellite",
     "a robotics startup bought"], start=1)]


def stuck(_messages: list[dict[str, Any]]) -> Reply:
    return [("search", {"query": "acme 2026 guidance"})]


def stopped_like_plain_calls(rig: Rig, wrap: bool = True) -> None:
    """The sixth streamed request, which would carry the fifth identical result, is vetoed before it is sent; the
    five that ran were read to their end (their spans carry the token counts of the stream's last chunk)."""
    model = ScriptedModel(stuck)
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_loop(rig, model, lambda _arguments, _n: SAME_PAGE, wrap=wrap, create=streamed_chat_completion)
    assert raised.value.detector == "tool_repeat" and raised.value.evidence["identical_calls"] == 5
    assert model.calls == 5 and all(body.get("stream") for body in model.requests)
    llm = rig.of_kind(Kind.LLM)
    assert len(llm) == 6 and len(rig.ran(Kind.LLM)) == 5 and len(rig.blocked()) == 1
    rig.assert_nothing_lost()
    assert rig.processor.stats.internal_errors == 0


def async_stopped_like_plain_calls(rig: Rig) -> None:
    model = ScriptedModel(stuck)
    with pytest.raises(spanbreaker.Tripped) as raised:
        asyncio.run(run_async_loop(rig, model, astreamed_chat_completion))
    assert raised.value.detector == "tool_repeat" and model.calls == 5
    rig.assert_nothing_lost()


def news_feed_is_quiet(rig: Rig) -> None:
    """The same query streamed twelve times, each answer new: progress, not a loop."""
    model = ScriptedModel(lambda messages: "done" if tool_results(messages) >= 12 else stuck(messages))
    ran = run_loop(rig, model, lambda _arguments, n: f"Latest: {NEWS[n - 1]}.", create=streamed_chat_completion)
    assert ran == 12 and model.calls == 13
    rig.assert_quiet()
    rig.assert_nothing_lost()


def token_budget_counts_what_streams_reported(rig: Rig) -> None:
    """``max_tokens=700``: the scripted model reports 140, 260 and 380 tokens in its streams' last chunks, so the
    third stream's end reaches the budget and the fourth request is blocked (tokens known only as streams end)."""
    model = ScriptedModel(stuck)
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_loop(rig, model, lambda _arguments, n: f"Latest: {NEWS[n - 1]}.", create=streamed_chat_completion)
    assert raised.value.detector == "token_budget" and model.calls == 3
    rig.assert_nothing_lost()
