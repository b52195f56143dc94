"""pydantic-ai under the breaker, on its native OpenTelemetry GenAI spans: each failure trips, each healthy
look-alike stays quiet. Real ``Agent`` and tools, pydantic-ai's own instrumentation; the model is a
``FunctionModel`` script, the only stub.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic_ai import Agent, ModelRetry, UsageLimits
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import spanbreaker
from spanbreaker.signals import Kind

from ..genai_rig import ORDERS, QUERIES, WIDE, Person, Rig, search_body
from .scripted import Scripted

pytestmark = pytest.mark.timeout(60)

LIMITS = UsageLimits(request_limit=30)


def queries(qs: list[str]) -> Any:
    return lambda n: [("search", {"query": qs[n]})] if n < len(qs) else "All sunny."


def loop(n: int) -> Any:
    return [("search", {"query": "weather in Paris"})]


def weather_agent(env: Rig, scripted: Scripted, answer: Any = None) -> Agent[None, str]:
    agent = Agent(scripted.model, name="weather_agent")

    @agent.tool_plain
    def search(query: str) -> str:
        """Search the web."""
        return search_body(env, query, answer)

    return agent


def test_identical_calls_trip_and_stop_the_run(env: Rig) -> None:
    scripted = Scripted(loop)
    with pytest.raises(spanbreaker.Tripped) as caught:
        weather_agent(env, scripted).run_sync("What's the weather in Paris?", usage_limits=LIMITS)
    assert caught.value.detector == "tool_repeat"
    assert caught.value.evidence["identical_calls"] == 5
    assert len(env.tool_bodies) == 4 and scripted.calls == 5  # the fifth identical call is vetoed before it runs
    env.assert_trip_marked("tool_repeat")
    env.assert_nothing_lost()


def test_async_run_is_stopped_too(env: Rig) -> None:
    scripted = Scripted(loop)
    with pytest.raises(spanbreaker.Tripped):
        asyncio.run(asyncio.wait_for(weather_agent(env, scripted).run("Weather?", usage_limits=LIMITS), 20))
    assert len(env.tool_bodies) == 4
    env.assert_nothing_lost()


@pytest.mark.parametrize("script", [QUERIES, WIDE], ids=["healthy", "wide"])
def test_healthy_and_wide_runs_are_quiet(env: Rig, script: list[str]) -> None:
    scripted = Scripted(queries(script))
    result = weather_agent(env, scripted).run_sync("Weather?", usage_limits=LIMITS)
    assert result.output == "All sunny."
    assert env.tool_bodies == script
    env.assert_quiet()
    env.assert_nothing_lost()


def test_legacy_format_loop_trips_and_wide_run_is_quiet(make_env: Any) -> None:
    """pydantic-ai's deprecated ``version=2`` keeps arguments and results under ``tool_arguments`` /
    ``tool_response`` (before the fix, unread: a wide run tripped at call 5)."""
    env = make_env(version=2)
    result = weather_agent(env, Scripted(queries(WIDE))).run_sync("Zones?", usage_limits=LIMITS)
    assert result.output == "All sunny." and env.tool_bodies == WIDE
    env.assert_quiet()
    env.tool_bodies.clear()
    with pytest.raises(spanbreaker.Tripped) as caught:
        weather_agent(env, Scripted(loop)).run_sync("Weather?", usage_limits=LIMITS)
    assert caught.value.detector == "tool_repeat" and len(env.tool_bodies) == 4
    env.assert_nothing_lost()


def test_reused_history_trips_session_bloat_from_input_messages(env: Rig) -> None:
    """pydantic-ai records the messages sent (``gen_ai.input.messages``) when the chat span ends: a run that
    drags 250 earlier messages in is decided there, and its next call is vetoed."""
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    history: list[Any] = []
    for i in range(125):
        history += [ModelRequest(parts=[UserPromptPart(f"question {i}")]), ModelResponse(parts=[TextPart(f"a{i}")])]
    scripted = Scripted(queries(QUERIES))
    with pytest.raises(spanbreaker.Tripped) as caught:
        weather_agent(env, scripted).run_sync("And now?", message_history=history, usage_limits=LIMITS)
    assert caught.value.detector == "session_bloat" and caught.value.evidence["history_messages"] == 250
    assert scripted.calls == 1 and env.tool_bodies == []  # the first model call ran; its tool call was vetoed
    env.assert_nothing_lost()


def test_short_history_is_not_session_bloat(env: Rig) -> None:
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    history = [ModelRequest(parts=[UserPromptPart("hi")]), ModelResponse(parts=[TextPart("hello")])]
    result = weather_agent(env, Scripted(queries(QUERIES))).run_sync("Weather?", message_history=history,
                                                                     usage_limits=LIMITS)
    assert result.output == "All sunny."
    env.assert_quiet()


def test_token_budget_stops_the_run(make_env: Any) -> None:
    env = make_env(max_tokens=500)
    scripted = Scripted(queries(WIDE))
    with pytest.raises(spanbreaker.Tripped) as caught:
        weather_agent(env, scripted, answer=lambda q, i: f"{q}: UTC+{i}").run_sync("Zones?", usage_limits=LIMITS)
    assert caught.value.detector == "token_budget"
    assert len(env.ran(Kind.LLM)) < 7
    env.assert_nothing_lost()


def test_instrument_switches_pydantic_ai_instrumentation_on(make_env: Any) -> None:
    """``spanbreaker.instrument(frameworks=["pydantic_ai"])`` on a provider of the application's."""
    env = make_env()
    from opentelemetry.sdk.trace import TracerProvider

    spanbreaker.instrumentation.uninstrument()
    Agent.instrument_all(False)
    provider = TracerProvider()
    try:
        processor = spanbreaker.instrument(tracer_provider=provider, frameworks=["pydantic_ai"])
        assert processor is not None
        with pytest.raises(spanbreaker.Tripped):
            weather_agent(env, Scripted(loop)).run_sync("Weather?", usage_limits=LIMITS)
        assert processor.stats.trips == 1
    finally:
        spanbreaker.instrumentation.uninstrument()
        provider.shutdown()


# -------------------------------------------------------------------------------- structured-output retries
def person_model(fixed_after: int | None) -> FunctionModel:
    """The model calls the output tool with a new invalid name every attempt (fixed after ``fixed_after``
    re-asks, or never); pydantic-ai re-asks with pydantic's error list as the call's response."""
    attempts = 0

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal attempts
        attempts += 1
        name = "JASON" if fixed_after is not None and attempts > fixed_after else f"jason {attempts}"
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"name": name, "age": 25})])

    return FunctionModel(reply, model_name="scripted-fn")


def test_a_structured_output_retry_loop_is_stopped(env: Rig) -> None:
    """``retries=30``: every attempt fails validation anew. No tool span in the trace, so the breaker reads the
    attempts from the messages on the model-call spans (at their end, pydantic-ai's); pydantic's error list as a
    call's response is a malformed call, and ten in a row trip ``tool_streak`` (31 attempts stock)."""
    agent = Agent(person_model(None), output_type=Person, retries=30)
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent.run_sync("Extract: jason is 25")
    assert caught.value.detector == "tool_streak" and caught.value.evidence["consecutive_calls"] == 10
    assert len(env.ran(Kind.LLM)) == 11, "the 11th attempt's messages show the 10th failure; the 12th is vetoed"
    env.assert_nothing_lost()


def test_a_structured_output_fixed_after_re_asks_is_quiet(env: Rig) -> None:
    agent = Agent(person_model(3), output_type=Person, retries=30)
    assert agent.run_sync("Extract: jason is 25").output.name == "JASON"
    env.assert_quiet()


def test_a_steer_reaches_the_model_as_the_calls_answer(make_env: Any) -> None:
    """``response="steer"``: the 5th identical search does not run; the steer is raised as pydantic-ai's
    ``ModelRetry`` (a plain exception would end the run), so the model reads its message as the call's answer, and a
    model that changes course finishes normally."""
    from pydantic_ai.messages import ToolReturnPart

    env = make_env(response="steer")
    read: list[str] = []

    class Reading(Scripted):
        def _reply(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            read[:] = [str(p.content) for m in messages for p in getattr(m, "parts", [])
                       if isinstance(p, ToolReturnPart)]
            return super()._reply(messages, info)

    def script(n: int) -> Any:
        return "Paris is sunny, as far as I can tell." if read and read[-1].startswith("spanbreaker:") else loop(n)

    scripted = Reading(script)
    result = weather_agent(env, scripted).run_sync("What's the weather in Paris?", usage_limits=LIMITS)
    assert result.output == "Paris is sunny, as far as I can tell."
    assert len(env.tool_bodies) == 4 and read[-1].startswith("spanbreaker: search called 5 times")
    steered = [s for s in env.spans() if (s.attributes or {}).get("spanbreaker.steered")]
    assert len(steered) == 1 and env.processor.stats.trips == 0
    env.assert_nothing_lost()


# ------------------------------------------------------------------------------------------ failed lookups
def lookup_agent(env: Rig) -> Agent[None, str]:
    """Tries one order number after another, each lookup failing alike (``ModelRetry``: the model reads why)."""
    tried: list[str] = []

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tried.append(ORDERS[len(tried)])
        return ModelResponse(parts=[ToolCallPart("find_order", {"order_id": tried[-1]})])

    agent = Agent(FunctionModel(script, model_name="scripted-fn"), name="support_agent", retries=10)

    @agent.tool_plain
    def find_order(order_id: str) -> str:
        """Look an order up."""
        env.tool_bodies.append(order_id)
        raise ModelRetry(f"order {order_id} not found")

    return agent


def test_lookups_failing_alike_turn_after_turn_trip(env: Rig) -> None:
    """pydantic-ai records no step spans, so a model turn is the step: an agent trying one order number after another
    itself, each lookup failing alike, is the code-repair loop's shape, stopped at the fourth failing turn (the
    fifth lookup is vetoed)."""
    with pytest.raises(spanbreaker.Tripped) as caught:
        lookup_agent(env).run_sync("Where is my order?", usage_limits=LIMITS)
    assert caught.value.detector == "error_loop" and caught.value.evidence["consecutive_steps"] == 4
    assert env.tool_bodies == ORDERS[:4]
    env.assert_trip_marked("error_loop")
    env.assert_nothing_lost()
