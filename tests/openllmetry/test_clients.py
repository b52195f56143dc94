"""Plain tool loops around the real Groq, Ollama and Google Gen AI clients, traced by OpenLLMetry's instrumentors for
them (Traceloop's ``opentelemetry-instrumentation-groq``, ``-ollama`` and ``-google-generativeai``).

Stock, none of them has the request on a model call's span when it starts: Groq's and Google Gen AI's set it just after
(content tracing on only), Ollama's starts its span with only ``gen_ai.system`` and ``llm.request.type``. So a loop with
no span of the application's around it ran to its own limit, and with one the seventh call was vetoed at best. With the
adapters (``spanbreaker.adapters.openllmetry_groq`` / ``_ollama`` / ``_google_genai``) the breaker is shown each
request's history as the span starts: the sixth request is vetoed before it is sent, content tracing on or off, with or
without a span around the loop. Ollama's spans are model calls by their ``llm.request.type`` (budgets count them). The
model is the only stub."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import spanbreaker
from spanbreaker.adapters.openllmetry_bedrock import ADAPTER as BEDROCK
from spanbreaker.adapters.openllmetry_google_genai import ADAPTER as GENAI
from spanbreaker.adapters.openllmetry_groq import ADAPTER as GROQ
from spanbreaker.adapters.openllmetry_ollama import ADAPTER as OLLAMA
from spanbreaker.signals import Kind

from ..clients.apps import APPS, TURNS, App, run_loop, same_page, stuck
from ..genai_rig import Rig
from ..openai_client.scripted import ScriptedModel, tool_results
from .conftest import CONTENT, content_rigs


@dataclass(frozen=True)
class Client:
    app: App
    adapter: Any
    instrumentor: Callable[[], Any]
    span: str
    """The instrumentor's span name (Groq's and Google Gen AI's end with the model)."""
    plain: Callable[[], dict[Any, dict[str, Any]]]
    """The client's own methods, as it defines them: put back after each test (the instrumentors' ``uninstrument``
    may leave their wrappers)."""


def _groq() -> Any:
    from opentelemetry.instrumentation.groq import GroqInstrumentor

    return GroqInstrumentor()


def _ollama() -> Any:
    from opentelemetry.instrumentation.ollama import OllamaInstrumentor

    return OllamaInstrumentor()


def _genai() -> Any:
    from opentelemetry.instrumentation.google_generativeai import GoogleGenerativeAiInstrumentor

    return GoogleGenerativeAiInstrumentor()


def _bedrock() -> Any:
    from opentelemetry.instrumentation.bedrock import BedrockInstrumentor

    return BedrockInstrumentor()


def _methods(module: str, owners: tuple[str, ...], names: tuple[str, ...]) -> Callable[[], dict[Any, dict[str, Any]]]:
    def plain() -> dict[Any, dict[str, Any]]:
        import importlib

        loaded = importlib.import_module(module)
        return {getattr(loaded, owner): {name: vars(getattr(loaded, owner))[name] for name in names}
                for owner in owners}
    return plain


CLIENTS = {
    "groq": Client(APPS["groq"], GROQ, _groq, "chat llama-3.3-70b-versatile",
                   _methods("groq.resources.chat.completions", ("Completions", "AsyncCompletions"), ("create",))),
    "ollama": Client(APPS["ollama"], OLLAMA, _ollama, "ollama.chat",
                     _methods("ollama._client", ("Client", "AsyncClient"), ("_request",))),
    "google-genai": Client(APPS["google-genai"], GENAI, _genai, "generate_content gemini-2.5-flash",
                           _methods("google.genai.models", ("Models", "AsyncModels"),
                                    ("generate_content", "generate_content_stream"))),
    "bedrock": Client(APPS["bedrock"], BEDROCK, _bedrock, "chat claude-3-5-sonnet-20240620-v1:0",
                      _methods("botocore.client", ("ClientCreator",), ("create_client",))),
}
PLAIN = {name: client.plain() for name, client in CLIENTS.items()}
"""Read once, before any instrumentor wrapped them."""


@dataclass
class Made:
    client: Client
    make: Callable[..., Rig]


@pytest.fixture(params=sorted(CLIENTS))
def made(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Made]:
    client = CLIENTS[request.param]
    with content_rigs(monkeypatch, client.adapter, client.instrumentor, PLAIN[request.param]) as make:
        yield Made(client, make)


def loop(rig: Rig, client: Client, model: ScriptedModel, wrap: bool = True, result: Any = same_page) -> int:
    return run_loop(rig, client.app, model, result, wrap=wrap)


@pytest.mark.parametrize("wrap", [True, False], ids=["in-a-span", "no-span"])
@pytest.mark.parametrize("content", list(CONTENT))
def test_a_repeated_call_is_stopped_at_the_model_call_that_would_read_it(made: Made, content: str, wrap: bool) -> None:
    rig = made.make(content)
    model = ScriptedModel(stuck, model=made.client.app.model)
    with pytest.raises(spanbreaker.Tripped) as raised:
        loop(rig, made.client, model, wrap)
    assert raised.value.detector == "tool_repeat" and raised.value.evidence["calls_from_prompt"] is True
    assert model.calls == 5, "the sixth request, which would send the fifth identical result, was never sent"
    assert [span.name for span in rig.blocked()] == [made.client.span]
    rig.assert_nothing_lost()


def test_the_instrumentor_instrumented_before_spanbreaker_is_read_the_same_way(made: Made) -> None:
    rig = made.make(instrumentor_first=True)
    model = ScriptedModel(stuck, model=made.client.app.model)
    with pytest.raises(spanbreaker.Tripped):
        loop(rig, made.client, model, wrap=False)
    assert model.calls == 5


def test_model_calls_are_model_calls_when_they_start(made: Made) -> None:
    """``max_model_calls=3``: the fourth request is vetoed before it is sent (Ollama's span by its
    ``llm.request.type``, the others by their GenAI operation)."""
    rig = made.make("content off", max_model_calls=3)
    model = ScriptedModel(lambda messages: [("search", {"query": f"q{tool_results(messages)}"})],
                          model=made.client.app.model)
    with pytest.raises(spanbreaker.Tripped) as raised:
        loop(rig, made.client, model, result=lambda arguments, n: f"page {n}")
    assert raised.value.detector == "call_budget" and model.calls == 3
    assert all(kind is Kind.LLM for _, kind, _ in rig.ledger.started.values() if kind is not Kind.OTHER)


def test_the_same_call_with_new_results_is_quiet(made: Made) -> None:
    rig = made.make()
    model = ScriptedModel(lambda messages: "done" if tool_results(messages) >= 10 else stuck(messages),
                          model=made.client.app.model)
    assert loop(rig, made.client, model, wrap=False, result=lambda arguments, n: f"headline {n}: {'ab' * n}") == 10
    rig.assert_quiet()
    rig.assert_nothing_lost()


@pytest.mark.parametrize("name", sorted(CLIENTS))
def test_stock_the_loop_without_a_span_runs_to_its_limit(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gap the adapters close (conformance): without them, a loop with no span around it (each model call a trace
    of its own) is never stopped, content tracing on: where the request reaches the span as it ends (Groq's, Google Gen
    AI's), the trip is found then, in a trace with no call left to veto."""
    client = CLIENTS[name]
    with content_rigs(monkeypatch, _NoAdapter(), client.instrumentor, PLAIN[name]) as make:
        rig = make()
        model = ScriptedModel(stuck, model=client.app.model)
        assert loop(rig, client, model, wrap=False) == TURNS
        assert model.calls == TURNS and rig.blocked() == []


class _NoAdapter:
    """Stands in for the adapter where the stock instrumentor is measured."""

    def instrument(self, provider: Any, processor: Any) -> None:
        pass

    def uninstrument(self) -> None:
        pass
