"""A plain tool loop around Google's Gen AI client (Gemini), traced by the real OpenInference Google GenAI
instrumentor: model call spans only. That instrumentor records the request text (``input.value``) only when the call
ends; at start the span carries OpenInference's flattened messages (``llm.input_messages.*``), which the breaker
reads. Gemini names no call ids: a turn's results pair with its calls by position. The model is the only stub."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any

import pytest
from google import genai
from google.genai import types
from openinference.instrumentation.google_genai import GoogleGenAIInstrumentor

import spanbreaker
from spanbreaker.signals import Kind

from ..genai_rig import Rig, make_rig
from ..openai_client.scripted import Reply, ScriptedModel, tool_results

TOOL = types.Tool(function_declarations=[types.FunctionDeclaration(
    name="search", parameters={"type": "object", "properties": {"query": {"type": "string"}}})])
CONFIG = types.GenerateContentConfig(tools=[TOOL])
TURNS = 30


@pytest.fixture
def rig() -> Iterator[Rig]:
    made = make_rig()
    GoogleGenAIInstrumentor().instrument(tracer_provider=made.provider)
    yield made
    GoogleGenAIInstrumentor().uninstrument()
    made.provider.shutdown()


def run_loop(rig: Rig, model: ScriptedModel, result: Any, wrap: bool = True) -> int:
    """The application: ``generate_content`` with a function declaration, the calls run by the application."""
    client = model.client(lambda http_client: genai.Client(api_key="offline", http_options=types.HttpOptions(
        base_url="http://scripted.invalid", httpx_client=http_client)), libraries=("httpx2",))
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text="find it")])]
    ran = 0
    with rig.provider.get_tracer("app").start_as_current_span("research") if wrap else nullcontext():
        for _ in range(TURNS):
            reply = client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=CONFIG)
            if not reply.function_calls:
                break
            contents.append(reply.candidates[0].content)  # type: ignore[index]
            for call in reply.function_calls:
                ran += 1
                rig.tool_bodies.append(str(call.args))
                contents.append(types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
                    name=call.name, response={"result": result(ran)}))]))
    return ran


def stuck(_contents: list[dict[str, Any]]) -> Reply:
    return [("search", {"query": "acme 2026 guidance"})]


@pytest.mark.parametrize("wrap", [True, False], ids=["in-a-span", "no-span"])
def test_a_gemini_loop_is_stopped_before_the_sixth_request_is_sent(rig: Rig, wrap: bool) -> None:
    model = ScriptedModel(stuck, model="gemini-2.5-flash")
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_loop(rig, model, lambda n: "Acme: guidance will be published in March.", wrap=wrap)
    trip = raised.value
    assert trip.detector == "tool_repeat" and trip.evidence["calls_from_prompt"] is True
    assert model.calls == 5
    assert len(rig.of_kind(Kind.LLM)) == 6 and [s.name for s in rig.blocked()] == ["GenerateContent"]
    rig.assert_nothing_lost()


def test_the_same_call_with_new_results_is_quiet(rig: Rig) -> None:
    model = ScriptedModel(lambda contents: "done" if tool_results(contents) >= 10 else stuck(contents))
    assert run_loop(rig, model, lambda n: f"Latest headline number {n}: {'ab' * n}", wrap=False) == 10
    rig.assert_quiet()
