"""Plain tool loops around the Groq, Ollama and Mistral clients, traced by OpenInference's instrumentors for them
through spanbreaker's adapters (:mod:`spanbreaker.adapters._start_tier`).

The three instrumentors start a model call's span with the request's flattened messages only and set its kind, model
and request (``input.value``) just after, so stock the breaker saw no model call: no budget counted one and a looping
application ran to its own limit. With the adapters the spans start with both, and the loop is read from each request's
messages: OpenAI's shape for Groq and Mistral, Ollama's own (tool calls without ids, results answering them in order).
Real clients, real instrumentors, real SDK; the model is the only stub (:class:`ScriptedModel`: Groq's and Mistral's
HTTP in process, Ollama's ``/api/chat`` on loopback).
"""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import spanbreaker
from spanbreaker.adapters import groq as groq_adapter
from spanbreaker.adapters import mistralai as mistralai_adapter
from spanbreaker.adapters import ollama as ollama_adapter
from spanbreaker.adapters._start_tier import METHOD
from spanbreaker.conventions.prompt_calls import PromptCall, last_turn, prompt_of
from spanbreaker.signals import Kind

from ..genai_rig import Rig, make_rig
from ..openai_client.scripted import ScriptedModel, tool_results
from .apps import APPS, SEARCH, TURNS, App, Result, openai_append, run_loop, same_page, stuck


@dataclass(frozen=True)
class Client:
    """One client: how the application talks to it, spanbreaker's adapter, its OpenInference instrumentor."""

    app: App
    adapter: Any
    instrumentor: str  # module:class
    span: str  # the instrumentor's span name

    @property
    def model(self) -> str:
        return self.app.model

    def make_instrumentor(self) -> Any:
        module, name = self.instrumentor.split(":")
        return getattr(importlib.import_module(module), name)()


CLIENTS = {
    "groq": Client(APPS["groq"], groq_adapter.ADAPTER, "openinference.instrumentation.groq:GroqInstrumentor",
                   "Completions"),
    "mistralai": Client(APPS["mistralai"], mistralai_adapter.ADAPTER,
                        "openinference.instrumentation.mistralai:MistralAIInstrumentor", "MistralClient.chat"),
    "ollama": Client(APPS["ollama"], ollama_adapter.ADAPTER, "openinference.instrumentation.ollama:OllamaInstrumentor",
                     "Chat"),
}


@dataclass
class Setup:
    rig: Rig
    client: Client


def instrumented(client: Client, *, adapter: bool = True, **config: Any) -> Iterator[Setup]:
    rig = make_rig(**config)
    instrumentor = client.make_instrumentor()
    instrumentor.instrument(tracer_provider=rig.provider)
    if adapter:
        client.adapter.instrument(rig.provider, rig.processor)
    try:
        yield Setup(rig, client)
    finally:
        client.adapter.uninstrument()
        instrumentor.uninstrument()
        rig.provider.shutdown()


@pytest.fixture(params=sorted(CLIENTS))
def setup(request: pytest.FixtureRequest) -> Iterator[Setup]:
    yield from instrumented(CLIENTS[request.param])


def loop(setup: Setup, model: ScriptedModel, result: Result = same_page, wrap: bool = True) -> int:
    return run_loop(setup.rig, setup.client.app, model, result, wrap=wrap)


@pytest.mark.parametrize("wrap", [True, False], ids=["in-a-span", "no-span"])
def test_a_loop_is_stopped_before_the_sixth_request_is_sent(setup: Setup, wrap: bool) -> None:
    model = ScriptedModel(stuck, model=setup.client.model)
    with pytest.raises(spanbreaker.Tripped) as raised:
        loop(setup, model, wrap=wrap)
    trip = raised.value
    assert trip.detector == "tool_repeat" and trip.evidence["calls_from_prompt"] is True
    assert model.calls == 5, "the sixth request, which would send the fifth identical result, was never sent"
    rig = setup.rig
    assert len(rig.tool_bodies) == 5
    assert len(rig.of_kind(Kind.LLM)) == 6 and len(rig.ran(Kind.LLM)) == 5
    blocked = rig.blocked()
    assert [s.name for s in blocked] == [setup.client.span]
    assert blocked[0].attributes["spanbreaker.tripped"] is True  # type: ignore[index]
    rig.assert_nothing_lost()


def test_the_spans_start_with_the_kind_and_the_request(setup: Setup) -> None:
    """The kind and the request as ``input.value`` at start, the flattened messages beside them; the last turn
    read from the request is the call and its result."""
    model = ScriptedModel(lambda messages: "done" if tool_results(messages) else stuck(messages),
                          model=setup.client.model)
    assert loop(setup, model) == 1
    keys = setup.rig.ledger.keys_at_start(Kind.LLM)
    assert len(keys) == 2 and all({"openinference.span.kind", "input.value"} <= k for k in keys)
    assert all(any(key.startswith("llm.input_messages.") for key in k) for k in keys)
    attributes = dict(setup.rig.of_kind(Kind.LLM)[1].attributes or {})
    found = last_turn(prompt_of(attributes))  # type: ignore[arg-type]
    assert found is not None
    assert [(call.name, json.loads(call.arguments), call.result, call.error) for call in found[1]] == [
        ("search", {"query": "acme 2026 guidance"}, same_page({}, 1), None)]
    assert all(isinstance(call, PromptCall) for call in found[1])


def test_the_same_call_with_new_results_is_quiet(setup: Setup) -> None:
    """Pagination: the same request each time, a new page each time: progress, runs to its end."""
    model = ScriptedModel(lambda messages: "done" if tool_results(messages) >= 10 else stuck(messages),
                          model=setup.client.model)
    assert loop(setup, model, lambda arguments, n: f"Latest headline number {n}: {'ab' * n}", wrap=False) == 10
    setup.rig.assert_quiet()
    setup.rig.assert_nothing_lost()


def test_different_queries_with_one_answer_are_quiet(setup: Setup) -> None:
    model = ScriptedModel(lambda messages: "done" if tool_results(messages) >= 8 else [
        ("search", {"query": f"acme guidance, angle {tool_results(messages)}"})], model=setup.client.model)
    assert loop(setup, model) == 8
    setup.rig.assert_quiet()


@pytest.mark.parametrize("name", sorted(CLIENTS))
def test_model_calls_count_against_the_budget_when_they_start(name: str) -> None:
    """``max_model_calls=3``: the fourth request is vetoed before it is sent (the scripted model counts)."""
    for made in instrumented(CLIENTS[name], max_model_calls=3):
        model = ScriptedModel(lambda messages: [("search", {"query": f"q{tool_results(messages)}"})],
                              model=made.client.model)
        with pytest.raises(spanbreaker.Tripped) as raised:
            loop(made, model, lambda arguments, n: f"page {n}")
        assert raised.value.detector == "call_budget" and model.calls == 3


@pytest.mark.parametrize("name", sorted(CLIENTS))
def test_the_stock_instrumentor_starts_the_span_unclassified_and_the_loop_runs_to_its_limit(name: str) -> None:
    """The gap the adapters close (conformance): stock, the span starts with the flattened messages only (no kind,
    no request), so the breaker sees no model call and the same looping application runs to its limit of 30 turns;
    the kind comes just after the start."""
    for made in instrumented(CLIENTS[name], adapter=False):
        model = ScriptedModel(stuck, model=made.client.model)
        assert loop(made, model) == TURNS
        assert model.calls == TURNS
        starts = [keys for span, _, keys in made.rig.ledger.started.values() if span == made.client.span]
        assert len(starts) == TURNS and not any("openinference.span.kind" in keys or "input.value" in keys
                                                for keys in starts)
        assert all(s.attributes.get("openinference.span.kind") == "LLM"  # type: ignore[union-attr]
                   for s in made.rig.spans() if s.name == made.client.span)
        made.rig.assert_quiet()


@pytest.mark.parametrize("name", sorted(CLIENTS))
def test_uninstrument_puts_the_instrumentors_method_back(name: str) -> None:
    client = CLIENTS[name]
    owner = importlib.import_module(client.adapter.wrappers)._WithTracer
    stock = vars(owner)[METHOD]
    rig = make_rig()
    client.adapter.instrument(rig.provider, rig.processor)
    assert vars(owner)[METHOD] is not stock
    client.adapter.uninstrument()
    assert vars(owner)[METHOD] is stock
    rig.provider.shutdown()


def test_an_async_groq_loop_is_stopped_too() -> None:
    """``AsyncGroq``: the instrumentor's async wrapper starts its span through the same method."""
    import groq

    async def agent(client: Any, model: str) -> None:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "find it"}]
        for _ in range(TURNS):
            reply = await client.chat.completions.create(model=model, messages=messages, tools=[SEARCH])
            calls = [(c.id, c.function.name, json.loads(c.function.arguments))
                     for c in reply.choices[0].message.tool_calls or ()]
            openai_append(messages, calls, [same_page({}, 0)] * len(calls))

    for made in instrumented(CLIENTS["groq"]):
        model = ScriptedModel(stuck, model=made.client.model)
        client = model.client(groq.AsyncGroq, asynchronous=True, api_key="offline", base_url="http://scripted.invalid",
                              max_retries=0)
        with pytest.raises(spanbreaker.Tripped) as raised:
            asyncio.run(agent(client, made.client.model))
        assert raised.value.detector == "tool_repeat" and model.calls == 5
        made.rig.assert_nothing_lost()


@pytest.mark.parametrize("name", sorted(CLIENTS))
def test_requests_the_instrumentor_hides_are_still_read(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``OPENINFERENCE_HIDE_INPUTS=true``: the spans carry no request, and the breaker is shown it in process (the
    OpenInference adapter, which ``spanbreaker.instrument()`` adds along with these): the loop is stopped the same."""
    from spanbreaker.adapters.openinference import ADAPTER as OPENINFERENCE

    monkeypatch.setenv("OPENINFERENCE_HIDE_INPUTS", "true")
    for made in instrumented(CLIENTS[name]):
        OPENINFERENCE.instrument(made.rig.provider, made.rig.processor)
        try:
            model = ScriptedModel(stuck, model=made.client.model)
            with pytest.raises(spanbreaker.Tripped) as raised:
                loop(made, model, wrap=False)
        finally:
            OPENINFERENCE.uninstrument()
        assert raised.value.detector == "tool_repeat" and model.calls == 5
        values = [dict(s.attributes or {}).get("input.value") for s in made.rig.of_kind(Kind.LLM)]
        assert values and all(value == "__REDACTED__" for value in values), values
        inputs = [value for s in made.rig.spans() for key, value in (s.attributes or {}).items()
                  if key.startswith(("input.", "llm.input_messages."))]
        assert "acme 2026 guidance" not in str(inputs), "the request stays off the spans"


def test_the_tiers_are_merged_from_iterators_or_mappings_and_other_calls_pass_as_they_are() -> None:
    from spanbreaker.adapters._start_tier import starting_with_both_tiers

    seen: dict[str, Any] = {}

    def wrapped(*args: Any, **kwargs: Any) -> str:
        seen.update(kwargs, args=args)
        return "span"

    assert starting_with_both_tiers(wrapped, None, (), {"span_name": "Chat", "attributes": iter([("kind", "LLM")]),
                                                        "extra_attributes": {"llm.input_messages.0": "hi"}}) == "span"
    assert seen["attributes"] == [("kind", "LLM")]
    assert seen["extra_attributes"] == [("llm.input_messages.0", "hi"), ("kind", "LLM")], "the important tier last"
    seen.clear()
    assert starting_with_both_tiers(wrapped, None, ("Chat", {}), {"extra_attributes": {}}) == "span"
    assert seen == {"args": ("Chat", {}), "extra_attributes": {}}
