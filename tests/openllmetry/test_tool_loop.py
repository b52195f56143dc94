"""A plain tool loop around the real OpenAI client, traced by OpenLLMetry's OpenAI instrumentor (Traceloop's
``opentelemetry-instrumentation-openai``): an ``openai.chat`` span per call that starts bare (the request is set just
after the start), no tool spans. The breaker is shown each request's messages in process as the span starts
(``spanbreaker.adapters.openllmetry_openai``) and stops a loop at the model call that would read the repeated result,
before it is sent, with content tracing on or off and with or without a span around the loop; healthy look-alikes
stay quiet; with content off nothing of the messages reaches a span. The model is the only stub."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import openai.resources.chat.completions as chat
import pytest
from opentelemetry.instrumentation.openai import OpenAIInstrumentor

import spanbreaker
from spanbreaker.adapters.openllmetry_openai import ADAPTER
from spanbreaker.signals import Kind

from ..genai_rig import WIDE, Rig
from ..openai_client.loop import TURNS, achat_completion, run_async_loop, run_loop
from ..openai_client.scripted import Reply, ScriptedModel
from .conftest import CONTENT

PAGE = "Acme: guidance will be published in March (internal-7f3a)."


def stuck(_messages: list[dict[str, Any]]) -> Reply:
    return [("search", {"query": "acme 2026 guidance"})]


def same_page(_arguments: dict[str, Any], _n: int) -> str:
    return PAGE


@pytest.mark.parametrize("wrap", [True, False], ids=["in-a-span", "no-span"])
@pytest.mark.parametrize("content", list(CONTENT))
def test_a_repeated_call_is_stopped_at_the_model_call_that_would_read_it(
        instrumented: Callable[..., Rig], content: str, wrap: bool) -> None:
    rig = instrumented(content)
    model = ScriptedModel(stuck)
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_loop(rig, model, same_page, wrap=wrap)
    trip = raised.value
    assert trip.detector == "tool_repeat" and trip.evidence["calls_from_prompt"] is True
    assert model.calls == 5, "the sixth request is vetoed before it is sent"
    assert len(rig.of_kind(Kind.LLM)) == 6 and len(rig.blocked()) == 1
    rig.assert_nothing_lost()
    if content == "content off":
        text = json.dumps([dict(s.attributes or {}) for s in rig.spans()], default=str)
        assert "internal-7f3a" not in text and "acme 2026 guidance" not in text


def test_the_instrumentor_instrumented_before_spanbreaker_is_read_the_same_way(
        instrumented: Callable[..., Rig]) -> None:
    rig = instrumented(instrumentor_first=True)
    model = ScriptedModel(stuck)
    with pytest.raises(spanbreaker.Tripped):
        run_loop(rig, model, same_page, wrap=False)
    assert model.calls == 5


def test_the_async_client_is_stopped_the_same_way(instrumented: Callable[..., Rig]) -> None:
    rig = instrumented("content off")
    model = ScriptedModel(stuck)
    with pytest.raises(spanbreaker.Tripped) as raised:
        asyncio.run(run_async_loop(rig, model, achat_completion))
    assert raised.value.detector == "tool_repeat" and model.calls == 5


@pytest.mark.parametrize("content", list(CONTENT))
def test_wide_research_with_one_answer_is_quiet(instrumented: Callable[..., Rig], content: str) -> None:
    rig = instrumented(content)
    queries = iter(WIDE)

    def script(_messages: list[dict[str, Any]]) -> Reply:
        query = next(queries, None)
        return "done" if query is None else [("search", {"query": query})]

    assert run_loop(rig, ScriptedModel(script), same_page, wrap=False) == len(WIDE)
    rig.assert_quiet()


def test_spanbreakers_uninstrument_puts_the_instrumentors_wrappers_back(instrumented: Callable[..., Rig]) -> None:
    rig = instrumented("content off")
    ADAPTER.uninstrument()
    for owner in (chat.Completions, chat.AsyncCompletions):
        assert vars(owner)["create"]._self_wrapper.__module__.startswith("opentelemetry.instrumentation.openai.")
    model = ScriptedModel(stuck)
    assert run_loop(rig, model, same_page) == TURNS, "content off and nothing shown: only the budgets remain"


def test_after_the_instrumentors_uninstrument_spanbreakers_puts_back_what_it_composed_with(
        instrumented: Callable[..., Rig]) -> None:
    """The instrumentor's ``uninstrument`` leaves its wrappers (and so the showing ones) in place; spanbreaker's then
    puts back the instrumentor's wrapper it composed with, and nothing of its own stays."""
    instrumented()
    OpenAIInstrumentor().uninstrument()
    ADAPTER.uninstrument()
    for owner in (chat.Completions, chat.AsyncCompletions):
        wrapper = vars(owner)["create"]._self_wrapper
        assert getattr(wrapper, "spanbreaker_shows", None) is None
        assert wrapper.__module__.startswith("opentelemetry.instrumentation.openai.")
