"""A plain tool loop around the real Anthropic client, traced by OpenLLMetry's Anthropic instrumentor (Traceloop's
``opentelemetry-instrumentation-anthropic``): an ``anthropic.chat`` span per ``messages.create`` that gets its request
just after it starts, the messages only while content tracing is on. The breaker is shown each request's messages
(``tool_use`` and ``tool_result`` blocks, the reply's own pydantic blocks among them) as the span starts
(``spanbreaker.adapters.openllmetry_anthropic``): the sixth request is vetoed before it is sent, content on or off,
with or without a span around the loop. The model is the only stub."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from typing import Any

import anthropic
import pytest
from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

import spanbreaker
from spanbreaker.adapters.openllmetry_anthropic import ADAPTER

from ..genai_rig import WIDE, Rig
from ..openai_client.loop import TURNS
from ..openai_client.scripted import Reply, ScriptedModel
from .conftest import CONTENT, content_rigs

TOOLS: Any = [{"name": "search", "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}}]
MODEL = "claude-sonnet-4-5"


@pytest.fixture
def instrumented(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Rig]]:
    with content_rigs(monkeypatch, ADAPTER, AnthropicInstrumentor) as make:
        yield make


def stuck(_messages: list[dict[str, Any]]) -> Reply:
    return [("search", {"query": "acme 2026 guidance"})]


def next_turn(messages: list[Any], content: Any) -> bool:
    """The reply's blocks as they came back, and a result for each ``tool_use``; False once the model answers."""
    messages.append({"role": "assistant", "content": content})
    uses = [block for block in content if block.type == "tool_use"]
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": use.id, "content": "Acme: guidance comes in March."} for use in uses]})
    return bool(uses)


def run_loop(rig: Rig, model: ScriptedModel, wrap: bool) -> None:
    client = model.client(anthropic.Anthropic, api_key="offline", base_url="http://scripted.invalid")
    messages: list[Any] = [{"role": "user", "content": "find it"}]
    with rig.provider.get_tracer("app").start_as_current_span("research") if wrap else nullcontext():
        for _ in range(TURNS):
            reply = client.messages.create(model=MODEL, max_tokens=256, messages=messages, tools=TOOLS)
            if not next_turn(messages, reply.content):
                return


@pytest.mark.parametrize("wrap", [True, False], ids=["in-a-span", "no-span"])
@pytest.mark.parametrize("content", list(CONTENT))
def test_a_repeated_call_is_stopped_at_the_model_call_that_would_read_it(
        instrumented: Callable[..., Rig], content: str, wrap: bool) -> None:
    rig = instrumented(content)
    model = ScriptedModel(stuck, model=MODEL)
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_loop(rig, model, wrap)
    assert raised.value.detector == "tool_repeat" and raised.value.evidence["calls_from_prompt"] is True
    assert model.calls == 5 and len(rig.blocked()) == 1


def test_the_instrumentor_instrumented_before_spanbreaker_is_read_the_same_way(
        instrumented: Callable[..., Rig]) -> None:
    rig = instrumented(instrumentor_first=True)
    model = ScriptedModel(stuck, model=MODEL)
    with pytest.raises(spanbreaker.Tripped):
        run_loop(rig, model, wrap=False)
    assert model.calls == 5


def test_the_async_client_is_stopped_the_same_way(instrumented: Callable[..., Rig]) -> None:
    instrumented("content off")
    model = ScriptedModel(stuck, model=MODEL)

    async def loop() -> None:
        client = model.client(anthropic.AsyncAnthropic, asynchronous=True, api_key="offline",
                              base_url="http://scripted.invalid")
        messages: list[Any] = [{"role": "user", "content": "find it"}]
        for _ in range(TURNS):
            reply = await client.messages.create(model=MODEL, max_tokens=256, messages=messages, tools=TOOLS)
            if not next_turn(messages, reply.content):
                return

    with pytest.raises(spanbreaker.Tripped):
        asyncio.run(loop())
    assert model.calls == 5


def test_wide_research_with_one_answer_is_quiet(instrumented: Callable[..., Rig]) -> None:
    rig = instrumented("content off")
    queries = iter(WIDE)

    def script(_messages: list[dict[str, Any]]) -> Reply:
        query = next(queries, None)
        return "done" if query is None else [("search", {"query": query})]

    model = ScriptedModel(script, model=MODEL)
    run_loop(rig, model, wrap=False)
    assert model.calls == len(WIDE) + 1
    rig.assert_quiet()
