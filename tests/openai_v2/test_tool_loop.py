"""A plain tool loop around the real OpenAI client, traced by OpenTelemetry's own OpenAI instrumentor (openai-v2): model
call spans in the GenAI conventions, no tool spans, and by default no message content. The breaker is shown each
request's messages in process (``spanbreaker.adapters.openai_v2``) and stops a loop at the model call that would read
the repeated result, before it is sent, in every mode of the instrumentor; healthy look-alikes stay quiet; nothing of
the messages reaches a span the instrumentor did not put there. The model is the only stub (an in-process HTTP
transport)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import openai.resources.chat.completions as chat
import pytest
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

import spanbreaker
from spanbreaker.adapters._client_requests import request_text
from spanbreaker.adapters.openai_v2 import ADAPTER
from spanbreaker.signals import Kind

from ..genai_rig import Rig
from ..openai_client.loop import TOOLS, TURNS, achat_completion, client_for, run_async_loop, run_loop
from ..openai_client.scripted import Reply, ScriptedModel
from .conftest import CONTENT_OFF, MODES

HEADLINES = [f"{subject} {event}" for subject, event in zip(
    ["Acme's CFO", "A filing with the SEC", "Reuters", "The investor relations page", "An analyst note",
     "Bloomberg", "The annual meeting agenda", "A press release", "The earnings call transcript", "A supplier",
     "The board", "A court filing"],
    ["hints that guidance moves to April", "lists a new revenue segment for cloud services",
     "reports a delayed product launch in Europe", "adds a webcast for the capital markets day",
     "downgrades the stock on margin pressure", "says layoffs hit the hardware unit",
     "proposes a share buyback programme", "announces the acquisition of a logistics startup",
     "mentions currency headwinds in Latin America", "warns of chip shortages through the summer",
     "appoints a new chief operating officer", "settles the patent dispute with a rival"], strict=True)]
SECRET_PAGE = "Acme: guidance will be published in March (internal-7f3a)."


def stuck(_messages: list[dict[str, Any]]) -> Reply:
    return [("search", {"query": "acme 2026 guidance"})]


def same_page(_arguments: dict[str, Any], _n: int) -> str:
    return SECRET_PAGE


def attribute_text(rig: Rig) -> str:
    return json.dumps([dict(s.attributes or {}) for s in rig.spans()], default=str)


@pytest.mark.parametrize("wrap", [True, False], ids=["in-a-span", "no-span"])
@pytest.mark.parametrize("mode", list(MODES))
def test_a_repeated_call_is_stopped_at_the_model_call_that_would_read_it(
        instrumented: Callable[..., Rig], mode: str, wrap: bool) -> None:
    """In every mode, with or without a span of the application's around the loop (then each model call is a trace
    of its own, and only its request shows the run): the sixth request, which would carry the fifth identical result
    to the model, is vetoed before it is sent."""
    rig = instrumented(mode)
    model = ScriptedModel(stuck)
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_loop(rig, model, same_page, wrap=wrap)
    trip = raised.value
    assert trip.detector == "tool_repeat"
    assert trip.evidence["calls_from_prompt"] is True and trip.evidence["identical_calls"] == 5
    assert model.calls == 5
    llm = rig.of_kind(Kind.LLM)
    assert len(llm) == 6 and len(rig.ran(Kind.LLM)) == 5 and len(rig.blocked()) == 1
    rig.assert_nothing_lost()
    if mode in CONTENT_OFF:  # what leaves the process is what the instrumentor put there: no message content
        assert "internal-7f3a" not in attribute_text(rig) and "acme 2026 guidance" not in attribute_text(rig)
        assert all("gen_ai.input.messages" not in (s.attributes or {}) for s in llm)


def test_the_instrumentor_instrumented_before_spanbreaker_is_read_the_same_way(
        instrumented: Callable[..., Rig]) -> None:
    rig = instrumented(openai_first=True)
    model = ScriptedModel(stuck)
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_loop(rig, model, same_page)
    assert raised.value.detector == "tool_repeat" and model.calls == 5


@pytest.mark.parametrize("mode", CONTENT_OFF)
def test_the_async_client_is_stopped_the_same_way(instrumented: Callable[..., Rig], mode: str) -> None:
    rig = instrumented(mode)
    model = ScriptedModel(stuck)
    with pytest.raises(spanbreaker.Tripped) as raised:
        asyncio.run(run_async_loop(rig, model, achat_completion))
    assert raised.value.detector == "tool_repeat" and model.calls == 5


def test_the_clients_own_message_objects_are_read(instrumented: Callable[..., Rig]) -> None:
    """An application that appends the reply's ``ChatCompletionMessage`` as it came back (a pydantic object, not a
    dict): the request is read through the object's own JSON form."""
    instrumented()
    model = ScriptedModel(stuck)
    client = client_for(model)
    messages: list[Any] = [{"role": "user", "content": "find it"}]
    with pytest.raises(spanbreaker.Tripped):
        for _ in range(TURNS):
            message = client.chat.completions.create(model="gpt-4o-mini", messages=messages,
                                                     tools=TOOLS).choices[0].message  # type: ignore[arg-type]
            messages.append(message)
            for call in message.tool_calls or []:
                messages.append({"role": "tool", "tool_call_id": call.id, "content": SECRET_PAGE})
    assert model.calls == 5


def test_the_same_call_with_new_results_is_quiet(instrumented: Callable[..., Rig]) -> None:
    """The same query answered with new news each time (a feed the agent reads until it has enough): progress."""
    rig = instrumented()
    model = ScriptedModel(lambda messages: "done" if sum(m.get("role") == "tool" for m in messages) >= 12
                          else stuck(messages))
    assert run_loop(rig, model, lambda _a, n: f"Latest: {HEADLINES[n - 1]}.") == 12
    rig.assert_quiet()


def test_wide_research_with_one_answer_is_quiet(instrumented: Callable[..., Rig]) -> None:
    """Six different queries that all come back with the same page: normal research, not a loop."""
    rig = instrumented()
    queries = iter(["acme guidance", "acme outlook 2026", "acme investor day", "acme revenue forecast",
                    "acme cfo comments", "acme annual report"])

    def script(messages: list[dict[str, Any]]) -> Reply:
        query = next(queries, None)
        return "done" if query is None else [("search", {"query": query})]

    assert run_loop(rig, ScriptedModel(script), same_page) == 6
    rig.assert_quiet()


def test_pagination_is_quiet(instrumented: Callable[..., Rig]) -> None:
    rig = instrumented()
    pages = iter(range(1, 11))

    def script(messages: list[dict[str, Any]]) -> Reply:
        page = next(pages, None)
        return "done" if page is None else [("search", {"query": "acme filings", "page": page})]

    assert run_loop(rig, ScriptedModel(script), lambda arguments, _n: f"filings page {arguments['page']}") == 10
    rig.assert_quiet()


def test_spanbreakers_uninstrument_puts_the_instrumentors_wrappers_back(instrumented: Callable[..., Rig]) -> None:
    rig = instrumented()
    ADAPTER.uninstrument()
    for owner in (chat.Completions, chat.AsyncCompletions):
        wrapper = vars(owner)["create"]._self_wrapper
        assert wrapper.__module__ == "opentelemetry.instrumentation.openai_v2.patch"
    model = ScriptedModel(stuck)
    assert run_loop(rig, model, same_page) == TURNS, "content off and nothing shown: only the budgets remain"
    assert len(rig.of_kind(Kind.LLM)) == TURNS


def test_the_instrumentors_uninstrument_leaves_the_client_plain(instrumented: Callable[..., Rig]) -> None:
    """openai-v2 uninstrumented first removes the showing wrappers with its own; spanbreaker's uninstrument after it
    does not bring the instrumentor's back."""
    instrumented()
    OpenAIInstrumentor().uninstrument()
    ADAPTER.uninstrument()
    assert not hasattr(vars(chat.Completions)["create"], "_self_wrapper")
    assert not hasattr(vars(chat.AsyncCompletions)["create"], "_self_wrapper")


def test_instrumenting_again_shows_again(instrumented: Callable[..., Rig]) -> None:
    rig = instrumented()
    OpenAIInstrumentor().uninstrument()
    OpenAIInstrumentor().instrument(tracer_provider=rig.provider)
    model = ScriptedModel(stuck)
    with pytest.raises(spanbreaker.Tripped):
        run_loop(rig, model, same_page)
    assert model.calls == 5


def test_messages_given_as_a_one_shot_iterable_are_left_unread(instrumented: Callable[..., Rig]) -> None:
    """The client still has to send them: a generator is never consumed for the breaker, the request stays unknown,
    and the call goes through."""
    rig = instrumented()
    model = ScriptedModel(lambda _messages: "done")
    reply = client_for(model).chat.completions.create(
        model="gpt-4o-mini", messages=(m for m in [{"role": "user", "content": "hi"}]))  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "done"
    assert rig.processor.stats.internal_errors == 0


def test_unreadable_messages_leave_the_request_unknown() -> None:
    class Opaque:
        pass

    assert request_text("messages", [{"role": "user", "content": "hi"}, Opaque()]) is None
    assert request_text("messages", iter([])) is None
    assert json.loads(request_text("messages", [{"role": "user", "content": "hi"}]) or "") == {
        "messages": [{"role": "user", "content": "hi"}]}

