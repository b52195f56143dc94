"""OpenAI Agents SDK under the breaker: each failure trips, each healthy look-alike stays quiet.

Real ``Agent`` / ``Runner`` / ``function_tool`` / handoffs, the real OpenInference instrumentor, the real SDK
exporter; :class:`ScriptedModel` is the only stub.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, function_tool

import spanbreaker
from spanbreaker.signals import Kind

from ..genai_rig import ORDERS, QUERIES, WIDE, Rig, search_body
from .scripted import ScriptedModel

pytestmark = pytest.mark.timeout(60)



def search_tool(env: Rig, answer: Any = None) -> Any:
    @function_tool
    def search(query: str) -> str:
        """Search the web."""
        return search_body(env, query, answer)

    return search


def queries(qs: list[str], handoffs: int = 0) -> Any:
    """Ask each query once, then answer. ``handoffs``: tool results in the input that came from handoffs."""
    return lambda n, items: [("search", {"query": qs[n - handoffs]})] if n - handoffs < len(qs) else "All sunny."


def loop(n: int, items: Any) -> Any:
    return [("search", {"query": "weather in Paris"})]


def weather_agent(env: Rig, script: Any, answer: Any = None) -> tuple[Agent[Any], ScriptedModel]:
    model = ScriptedModel(script)
    return Agent(name="Weather agent", instructions="Answer.", tools=[search_tool(env, answer)], model=model), model


@pytest.mark.parametrize("sensitive", [True, False], ids=["sensitive", "not-sensitive"])
def test_identical_calls_trip_and_stop_the_run(env: Rig, sensitive: bool) -> None:
    """The instrumentor sets a tool call's arguments only when its span ends (and, with
    ``trace_include_sensitive_data=False``, never); the adapter shows the breaker each call as its span starts, so
    the fifth identical call is vetoed before it runs, and nothing is added to the spans."""
    agent, _model = weather_agent(env, loop)
    with pytest.raises(spanbreaker.Tripped) as caught:
        Runner.run_sync(agent, "What's the weather in Paris?", max_turns=30,
                        run_config=RunConfig(trace_include_sensitive_data=sensitive))
    assert caught.value.detector == "tool_repeat"
    assert caught.value.evidence["identical_calls"] == 5
    assert len(env.tool_bodies) == 4 and len(env.ran(Kind.LLM)) == 5  # max_turns alone would allow 30
    assert [s.name for s in env.blocked()] == ["search"]
    env.assert_trip_marked("tool_repeat")
    env.assert_nothing_lost()
    tools = [dict(span.attributes or {}) for span in env.of_kind(Kind.TOOL)]
    assert all(bool(attributes.get("input.value")) is sensitive for attributes in tools[:4])


def test_async_run_is_stopped_too(env: Rig) -> None:
    agent, _model = weather_agent(env, loop)
    with pytest.raises(spanbreaker.Tripped):
        asyncio.run(asyncio.wait_for(Runner.run(agent, "What's the weather?", max_turns=30), 20))
    assert len(env.tool_bodies) == 4
    env.assert_nothing_lost()


def test_without_sensitive_data_the_same_call_with_new_results_is_quiet(env: Rig) -> None:
    """The loop's twin with ``trace_include_sensitive_data=False``: the same search, the answer moving."""
    agent, _model = weather_agent(env, lambda n, items: [("search", {"query": "weather in Paris"})] if n < 8
                                  else "Sunny.", lambda q, i: f"update #{i}: still raining")
    Runner.run_sync(agent, "What's the weather?", max_turns=30,
                    run_config=RunConfig(trace_include_sensitive_data=False))
    assert len(env.tool_bodies) == 8
    env.assert_quiet()


@pytest.mark.parametrize("script", [QUERIES, WIDE], ids=["healthy", "wide"])
def test_healthy_and_wide_runs_are_quiet(env: Rig, script: list[str]) -> None:
    """Wide: six different queries that all return the same answer (before the fix, tool_repeat at call 5: the
    arguments were not on the spans at start and every call was keyed as if it had none)."""
    agent, _model = weather_agent(env, queries(script))
    result = Runner.run_sync(agent, "What's the weather?", max_turns=30)
    assert result.final_output == "All sunny."
    assert env.tool_bodies == script
    env.assert_quiet()
    env.assert_nothing_lost()


def test_token_budget_stops_the_run(make_env: Any) -> None:
    env = make_env(max_tokens=500)
    agent, _model = weather_agent(env, queries(WIDE), answer=lambda q, i: f"{q}: UTC+{i}")
    with pytest.raises(spanbreaker.Tripped) as caught:
        Runner.run_sync(agent, "Timezones?", max_turns=30)
    assert caught.value.detector == "token_budget"
    assert len(env.ran(Kind.LLM)) < 7
    env.assert_nothing_lost()


# ----------------------------------------------------------------------------------------------- handoffs
def triage(env: Rig, specialist_script: Any) -> tuple[Agent[Any], ScriptedModel, ScriptedModel]:
    specialist, specialist_model = weather_agent(env, specialist_script)
    triage_model = ScriptedModel(lambda n, items: [("transfer_to_weather_agent", {})])
    return Agent(name="Triage", instructions="Route.", handoffs=[specialist], model=triage_model), \
        triage_model, specialist_model


def test_handoff_then_loop_trips(env: Rig) -> None:
    agent, triage_model, _specialist_model = triage(env, loop)
    with pytest.raises(spanbreaker.Tripped) as caught:
        Runner.run_sync(agent, "What's the weather in Paris?", max_turns=30)
    assert caught.value.detector == "tool_repeat"
    assert triage_model.calls == 1 and len(env.tool_bodies) == 4
    env.assert_trip_marked("tool_repeat")
    env.assert_nothing_lost()


def test_healthy_handoff_is_quiet(env: Rig) -> None:
    agent, triage_model, _specialist_model = triage(env, queries(QUERIES, handoffs=1))
    result = Runner.run_sync(agent, "What's the weather?", max_turns=30)
    assert result.final_output == "All sunny." and triage_model.calls == 1
    assert env.tool_bodies == QUERIES
    env.assert_quiet()
    env.assert_nothing_lost()


def test_instrument_attaches_and_instruments(env: Rig) -> None:
    """``spanbreaker.instrument(frameworks=["openai_agents"])`` on a provider of the application's."""
    from opentelemetry.sdk.trace import TracerProvider

    provider = TracerProvider()
    try:
        processor = spanbreaker.instrument(tracer_provider=provider, frameworks=["openai_agents"])
        assert processor is not None
        agent, _ = weather_agent(env, loop)
        with pytest.raises(spanbreaker.Tripped):
            Runner.run_sync(agent, "What's the weather?", max_turns=30)
        assert processor.stats.trips == 1
    finally:
        spanbreaker.instrumentation.uninstrument()
        provider.shutdown()


def test_a_steer_reaches_the_model_as_the_calls_output(make_env: Any) -> None:
    """``response="steer"``: the steer is raised where the call's span starts, inside the SDK's trace processors,
    which swallow any ``Exception`` (the call would have run, its span marked as never run). The adapter keeps it
    for the call: the 5th identical search does not run and the model reads the steer's message as its output; a
    model that changes course then finishes normally."""
    env = make_env(response="steer")
    read: list[str] = []

    def script(n: int, items: Any) -> Any:
        outputs = [str(item.get("output")) for item in items
                   if isinstance(item, dict) and item.get("type") == "function_call_output"]
        read[:] = outputs
        if outputs and outputs[-1].startswith("spanbreaker:"):
            return "I could not find anything new: Paris is sunny."
        return [("search", {"query": "weather in Paris"})]

    agent, _model = weather_agent(env, script)
    result = Runner.run_sync(agent, "What's the weather in Paris?", max_turns=30)
    assert result.final_output == "I could not find anything new: Paris is sunny."
    assert len(env.tool_bodies) == 4 and read[-1].startswith("spanbreaker: search called 5 times")
    steered = [s for s in env.spans() if (s.attributes or {}).get("spanbreaker.steered")]
    assert [s.name for s in steered] == ["search"]
    assert env.processor.stats.trips == 0 and env.processor.stats.internal_errors == 0
    env.assert_nothing_lost()


# ------------------------------------------------------------------------------------------ a conversation
def support_agent(env: Rig) -> Agent[Any]:
    @function_tool
    def find_order(order_id: str) -> str:
        """Look an order up."""
        env.tool_bodies.append(order_id)
        raise LookupError(f"order {order_id} not found")

    def script(results: int, items: list[Any]) -> Any:
        """Each user message: look its order up; the failure back: ask the customer to check the number."""
        last = items[-1] if items else {}
        if isinstance(last, dict) and last.get("type") == "function_call_output":
            return "I could not find that order. Could you check the number?"
        asked = next(word.rstrip("?") for word in str(last.get("content")).split() if word[1:2].isdigit())
        return [("find_order", {"order_id": asked})]

    return Agent(name="Support agent", instructions="Help the customer.", tools=[find_order],
                 model=ScriptedModel(script))


def test_a_conversation_in_one_trace_is_not_an_error_loop(env: Rig) -> None:
    """A chat grouped into one trace (the SDK's ``trace()`` around one run per user message, as its docs suggest):
    each message brings a new order number, the lookup fails alike, and the agent replies to the customer. The SDK
    records each model turn as a ``turn`` span, a step: the reply's step ended clean, so the failures are not in a
    row. (A framework without step spans counts them in a row: BENCHMARKS.md, session 26.)"""
    from agents import trace as sdk_trace

    agent = support_agent(env)
    history: list[Any] = []
    with sdk_trace("Support chat"):
        for order in ORDERS:
            result = Runner.run_sync(agent, [*history, {"role": "user", "content": f"Where is my order {order}?"}],
                                     max_turns=10)
            history = result.to_input_list()
    assert env.tool_bodies == ORDERS
    assert len({span.context.trace_id for span in env.spans()}) == 1
    env.assert_quiet()
    env.assert_nothing_lost()
