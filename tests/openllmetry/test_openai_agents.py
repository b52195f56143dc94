"""The OpenAI Agents SDK traced by OpenLLMetry's OpenAI Agents instrumentor (Traceloop's
``opentelemetry-instrumentation-openai-agents``), with spanbreaker's adapter: each function call is shown to the
breaker as it starts, so the fifth identical call is vetoed before it runs, with content tracing and the SDK's
sensitive data on or off; healthy look-alikes stay quiet; a steer reaches the model as the call's output.

Real ``Agent`` / ``Runner`` / ``function_tool`` and the SDK's own ``OpenAIResponsesModel`` over the real OpenAI client;
the scripted model behind the client's HTTP transport is the only stub.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest
from agents import (
    Agent,
    MaxTurnsExceeded,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    function_tool,
    set_trace_processors,
)
from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

import spanbreaker
from spanbreaker.adapters.openllmetry_openai_agents import ADAPTER
from spanbreaker.signals import Kind

from ..genai_rig import QUERIES, WIDE, Rig, search_body
from ..openai_client.scripted import Reply, ScriptedModel, tool_results
from .conftest import CONTENT, content_rigs

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def make_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Rig]]:
    """``make(content="content on", **config)``: a rig with the adapter and the instrumentor on. The SDK's own trace
    processors (its exporter to OpenAI's backend) are taken off first, and the instrumentor's after the test: its
    ``uninstrument`` leaves its processor on the SDK (0.62.4)."""
    set_trace_processors([])
    with content_rigs(monkeypatch, ADAPTER, OpenAIAgentsInstrumentor) as make:
        yield make
    set_trace_processors([])


def weather_agent(rig: Rig, script: Callable[[list[Any]], Reply], answer: Callable[[str, int], Any] | None = None,
                  api: Any = OpenAIResponsesModel) -> tuple[Agent[Any], ScriptedModel]:
    """An agent with one search tool on the SDK's model class ``api`` (Responses or Chat Completions)."""
    model = ScriptedModel(script)
    client = model.client(openai.AsyncOpenAI, asynchronous=True, api_key="offline",
                          base_url="http://scripted.invalid/v1")

    @function_tool
    def search(query: str) -> str:
        """Search the web."""
        return search_body(rig, query, answer)

    return Agent(name="Weather agent", instructions="Answer.", tools=[search], model=api("gpt-4o-mini", client)), model


def loop(_items: list[Any]) -> Reply:
    return [("search", {"query": "weather in Paris"})]


def queries(asked: list[str]) -> Callable[[list[Any]], Reply]:
    """Ask each query once, then answer."""
    return lambda items: [("search", {"query": asked[tool_results(items)]})] if tool_results(items) < len(asked) \
        else "All sunny."


def tool_attributes(rig: Rig) -> list[dict[str, Any]]:
    return [dict(span.attributes or {}) for span in rig.of_kind(Kind.TOOL)]


@pytest.mark.parametrize("sensitive", [True, False], ids=["sensitive", "not-sensitive"])
@pytest.mark.parametrize("content", list(CONTENT))
def test_a_loop_is_stopped_before_the_fifth_identical_call_runs(
        make_env: Callable[..., Rig], content: str, sensitive: bool) -> None:
    """The instrumentor sets a call's arguments only as its span ends, and only with content tracing and the SDK's
    sensitive data on; the adapter shows each call as its span starts, so the fifth identical call is vetoed before
    it runs in every case, and nothing of the call is added to the spans."""
    rig = make_env(content)
    agent, model = weather_agent(rig, loop)
    with pytest.raises(spanbreaker.Tripped) as caught:
        Runner.run_sync(agent, "What's the weather in Paris?", max_turns=30,
                        run_config=RunConfig(trace_include_sensitive_data=sensitive))
    assert caught.value.detector == "tool_repeat" and caught.value.evidence["identical_calls"] == 5
    assert len(rig.tool_bodies) == 4 and model.calls == 5  # max_turns alone would allow 30
    assert [s.name for s in rig.blocked()] == ["search.tool"]
    rig.assert_trip_marked("tool_repeat")
    rig.assert_nothing_lost()
    recorded = content == "content on" and sensitive
    assert all(("gen_ai.tool.call.arguments" in attributes) is recorded for attributes in tool_attributes(rig)[:4])


@pytest.mark.parametrize("content", list(CONTENT))
def test_without_the_adapter_a_call_is_read_only_as_it_ends_and_not_without_content(
        make_env: Callable[..., Rig], content: str) -> None:
    """The stock instrumentor, measured: with content, the fifth identical call runs and the next model call is
    vetoed; without it no call is read and the agent runs to its turn limit."""
    rig = make_env(content)
    ADAPTER.uninstrument()
    agent, model = weather_agent(rig, loop)
    if content == "content on":
        with pytest.raises(spanbreaker.Tripped):
            Runner.run_sync(agent, "What's the weather in Paris?", max_turns=12)
        assert len(rig.tool_bodies) == 5 and model.calls == 5
        assert [s.name for s in rig.blocked()] == ["openai.response"]
    else:
        with pytest.raises(MaxTurnsExceeded):
            Runner.run_sync(agent, "What's the weather in Paris?", max_turns=12)
        assert len(rig.tool_bodies) == 12 and model.calls == 12 and rig.processor.stats.trips == 0


def test_an_async_run_is_stopped_the_same_way(make_env: Callable[..., Rig]) -> None:
    rig = make_env("content off")
    agent, _model = weather_agent(rig, loop)
    with pytest.raises(spanbreaker.Tripped):
        asyncio.run(asyncio.wait_for(Runner.run(agent, "What's the weather?", max_turns=30), 20))
    assert len(rig.tool_bodies) == 4
    rig.assert_nothing_lost()


def test_the_same_call_with_new_results_is_quiet(make_env: Callable[..., Rig]) -> None:
    rig = make_env("content off")
    agent, _model = weather_agent(rig, lambda items: loop(items) if tool_results(items) < 8 else "Sunny.",
                                  lambda query, n: f"update #{n}: still raining")
    assert Runner.run_sync(agent, "What's the weather?", max_turns=30).final_output == "Sunny."
    assert len(rig.tool_bodies) == 8
    rig.assert_quiet()


@pytest.mark.parametrize("asked", [QUERIES, WIDE], ids=["healthy", "wide"])
def test_healthy_and_wide_runs_are_quiet(make_env: Callable[..., Rig], asked: list[str]) -> None:
    """Wide: six different queries that all come back with the same answer."""
    rig = make_env()
    agent, _model = weather_agent(rig, queries(asked))
    assert Runner.run_sync(agent, "What's the weather?", max_turns=30).final_output == "All sunny."
    assert rig.tool_bodies == asked
    rig.assert_quiet()
    rig.assert_nothing_lost()


@pytest.mark.parametrize("api", [OpenAIResponsesModel, OpenAIChatCompletionsModel], ids=["responses", "chat"])
def test_the_token_budget_counts_each_model_calls_usage(make_env: Callable[..., Rig], api: Any) -> None:
    """``max_tokens=500``; the scripted model reports 140, 260, then 380 tokens: the third call's end reaches the
    budget and the call after it is vetoed. With Chat Completions the instrumentor records no usage (it reads a
    ``response`` that model's SDK span does not have); the adapter puts the usage the SDK recorded on the span."""
    rig = make_env(max_tokens=500)
    agent, model = weather_agent(rig, queries(WIDE), answer=lambda query, n: f"{query}: UTC+{n}", api=api)
    with pytest.raises(spanbreaker.Tripped) as caught:
        Runner.run_sync(agent, "Timezones?", max_turns=30)
    assert caught.value.detector == "token_budget" and model.calls == 3
    assert all((s.attributes or {}).get("gen_ai.usage.input_tokens") for s in rig.ran(Kind.LLM))
    rig.assert_nothing_lost()


def test_a_steer_reaches_the_model_as_the_calls_output(make_env: Callable[..., Rig]) -> None:
    """``response="steer"``: the steer is raised where the call's span starts, inside the instrumentor's processor,
    which swallows any ``Exception`` (the call would have run). The adapter keeps it for the call: the fifth identical
    search does not run and the model reads the steer's message as its output, then finishes normally."""
    rig = make_env(response="steer")
    read: list[str] = []

    def script(items: list[Any]) -> Reply:
        outputs = [str(item.get("output")) for item in items
                   if isinstance(item, dict) and item.get("type") == "function_call_output"]
        read[:] = outputs
        if outputs and outputs[-1].startswith("spanbreaker:"):
            return "I could not find anything new: Paris is sunny."
        return loop(items)

    agent, _model = weather_agent(rig, script)
    result = Runner.run_sync(agent, "What's the weather in Paris?", max_turns=30)
    assert result.final_output == "I could not find anything new: Paris is sunny."
    assert len(rig.tool_bodies) == 4 and read[-1].startswith("spanbreaker: search called 5 times")
    assert rig.processor.stats.trips == 0 and rig.processor.stats.internal_errors == 0
    rig.assert_nothing_lost()


def test_instrument_loads_the_adapter_with_the_instrumentor(make_env: Callable[..., Rig]) -> None:
    """``spanbreaker.instrument()`` on the application's provider, the instrumentor switched on by the application:
    the adapter comes with it and the loop is stopped at the fifth call, content off."""
    rig = make_env("content off")
    ADAPTER.uninstrument()
    try:
        processor = spanbreaker.instrument(tracer_provider=rig.provider, frameworks=["openllmetry_openai_agents"])
        assert processor is not None
        agent, _model = weather_agent(rig, loop)
        with pytest.raises(spanbreaker.Tripped):
            Runner.run_sync(agent, "What's the weather?", max_turns=30)
        assert len(rig.tool_bodies) == 4
    finally:
        spanbreaker.instrumentation.uninstrument()
