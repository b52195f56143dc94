"""Microsoft Agent Framework under the breaker, on its stock OpenTelemetry GenAI spans: a loop trips and stops
``agent.run``, awaited or streamed; healthy look-alikes stay quiet; model-call and token budgets work in either
sensitive-data setting. With sensitive data off (Agent Framework's default) a tool span carries no arguments or
results: spanbreaker's adapter shows the breaker the call in process, and the exported spans stay without them;
stock, the loop goes on to Agent Framework's own limit. Real ``Agent`` and ``@tool``, Agent Framework's own
function-calling loop and telemetry; the model is a script, the only stub.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agent_framework import Agent, tool

import spanbreaker
from spanbreaker.signals import Kind

from ..genai_rig import QUERIES, WIDE, Rig, search_body
from .scripted import Reply, Scripted

pytestmark = pytest.mark.timeout(60)


def queries(qs: list[str]) -> Any:
    return lambda n: [("search", {"query": qs[n]})] if n < len(qs) else "All sunny."


def loop(n: int) -> Reply:
    return [("search", {"query": "weather in Paris"})]


def weather_agent(env: Rig, scripted: Scripted, answer: Any = None) -> Agent:
    @tool
    def search(query: str) -> str:
        """Search the web."""
        return search_body(env, query, answer)

    return Agent(client=scripted, name="weather_agent", instructions="You look things up.", tools=[search])


def run(agent: Agent, how: str = "await", prompt: str = "What's the weather?") -> str:
    async def go() -> str:
        if how == "stream":
            stream = agent.run(prompt, stream=True)
            async for _ in stream:
                pass
            return (await stream.get_final_response()).text
        return (await agent.run(prompt)).text

    return asyncio.run(asyncio.wait_for(go(), 20))


@pytest.mark.parametrize("how", ["await", "stream"])
def test_identical_calls_trip_and_stop_the_run(make_env: Any, how: str) -> None:
    env = make_env(sensitive=True)
    scripted = Scripted(loop)
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(weather_agent(env, scripted), how)
    assert caught.value.detector == "tool_repeat"
    assert caught.value.evidence["identical_calls"] == 5
    assert len(env.tool_bodies) == 4 and scripted.calls == 5  # the fifth identical call is vetoed before it runs
    assert [s.name for s in env.blocked()] == ["execute_tool search"]  # ... and the run stops there
    env.assert_trip_marked("tool_repeat")
    env.assert_nothing_lost()
    agent_span = next(s for s in env.spans() if s.name == "invoke_agent weather_agent")
    assert agent_span.parent is None and (agent_span.attributes or {}).get("spanbreaker.tripped")


@pytest.mark.parametrize("sensitive", [True, False], ids=["sensitive", "not-sensitive"])
def test_parallel_identical_calls_in_one_turn_stop_the_run(make_env: Any, sensitive: bool) -> None:
    """Three identical calls per turn, run concurrently by Agent Framework: counted once per model turn (by design),
    the loop across turns trips, all three calls of the fifth turn are vetoed, and every span is ended. With
    sensitive data off each concurrent call is shown to the breaker in its own task's context."""
    env = make_env(sensitive=sensitive)
    scripted = Scripted(lambda n: [("search", {"query": "weather in Paris"})] * 3)
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(weather_agent(env, scripted))
    assert caught.value.detector == "tool_repeat"
    assert scripted.calls == 5 and len(env.tool_bodies) == 12
    assert [s.name for s in env.blocked()] == ["execute_tool search"] * 3
    env.assert_nothing_lost()


@pytest.mark.parametrize("sensitive", [True, False], ids=["sensitive", "not-sensitive"])
@pytest.mark.parametrize("script", [QUERIES, WIDE], ids=["healthy", "wide"])
def test_healthy_and_wide_runs_are_quiet(make_env: Any, sensitive: bool, script: list[str]) -> None:
    env = make_env(sensitive=sensitive)
    answer = (lambda q, i: f"{q.split()[-1]}: sunny, {18 + i}C") if script is QUERIES else None
    assert run(weather_agent(env, Scripted(queries(script)), answer)) == "All sunny."
    assert env.tool_bodies == script
    env.assert_quiet()
    env.assert_nothing_lost()


@pytest.mark.parametrize("how", ["await", "stream"])
@pytest.mark.parametrize("sensitive", [True, False], ids=["sensitive", "not-sensitive"])
def test_model_call_budget_vetoes_the_next_chat(make_env: Any, sensitive: bool, how: str) -> None:
    """``chat <model>`` spans start bare but are model calls by their GenAI name: the fourth is vetoed before the
    client is called."""
    env = make_env(sensitive=sensitive, max_model_calls=3)
    scripted = Scripted(queries(QUERIES))
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(weather_agent(env, scripted), how)
    assert caught.value.detector == "call_budget"
    assert scripted.calls == 3 and len(env.ran(Kind.LLM)) == 3
    assert [s.name for s in env.blocked()] == ["chat scripted-model"]
    env.assert_trip_marked("call_budget")
    env.assert_nothing_lost()


@pytest.mark.parametrize("sensitive", [True, False], ids=["sensitive", "not-sensitive"])
def test_token_budget_stops_the_run(make_env: Any, sensitive: bool) -> None:
    """Usage comes on the chat span's end; the next call (here the third search) is vetoed."""
    env = make_env(sensitive=sensitive, max_tokens=300)
    scripted = Scripted(queries(WIDE))
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(weather_agent(env, scripted))
    assert caught.value.detector == "token_budget"
    assert scripted.calls == 3 and len(env.tool_bodies) == 2
    assert [s.name for s in env.blocked()] == ["execute_tool search"]
    env.assert_nothing_lost()


@pytest.mark.parametrize("how", ["await", "stream"])
def test_without_sensitive_data_the_loop_is_stopped_and_nothing_is_exported(make_env: Any, how: str) -> None:
    """Agent Framework's default: an ``execute_tool`` span has the tool's name but no arguments or result. The adapter
    shows the breaker the call in process: the 5th identical call is vetoed, and no exported span carries the
    arguments or the result."""
    env = make_env(sensitive=False)
    scripted = Scripted(loop)
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(weather_agent(env, scripted), how)
    assert caught.value.detector == "tool_repeat" and caught.value.evidence["identical_calls"] == 5
    assert len(env.tool_bodies) == 4 and scripted.calls == 5
    assert [s.name for s in env.blocked()] == ["execute_tool search"]
    exported = [dict(s.attributes or {}) for s in env.spans()]
    assert not any(key.startswith(("gen_ai.tool.call.arguments", "gen_ai.tool.call.result"))
                   for attributes in exported for key in attributes)
    assert not any("weather in Paris" in str(value) for attributes in exported for value in attributes.values())
    env.assert_nothing_lost()


def test_without_sensitive_data_the_same_call_with_new_results_is_quiet(make_env: Any) -> None:
    """The loop's twin in process too: the same search, the answer moving (a status being polled)."""
    env = make_env(sensitive=False)
    scripted = Scripted(lambda n: [("search", {"query": "weather in Paris"})] if n < 8 else "Sunny.")
    assert run(weather_agent(env, scripted, lambda q, i: f"update #{i}: still raining")) == "Sunny."
    assert len(env.tool_bodies) == 8
    env.assert_quiet()


def test_stock_without_sensitive_data_the_loop_is_not_caught(make_env: Any) -> None:
    """No adapter, Agent Framework's default: every call is unknown, never identical. Nothing trips (and nothing
    false trips); the loop runs to Agent Framework's own iteration limit."""
    env = make_env(sensitive=False, adapter=False)
    scripted = Scripted(loop)
    run(weather_agent(env, scripted))
    assert len(env.tool_bodies) > 5
    env.assert_quiet()
    env.assert_nothing_lost()


def test_tool_call_attributes_need_the_latest_semconv(make_env: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sensitive data on, but ``OTEL_SEMCONV_STABILITY_OPT_IN`` set without ``gen_ai_latest_experimental``: Agent
    Framework drops the tool-call arguments and results, and stock the loop is not caught either (the adapter
    shows them in process, as with sensitive data off)."""
    from agent_framework.observability import OBSERVABILITY_SETTINGS

    env = make_env(sensitive=True, adapter=False)
    monkeypatch.setattr(OBSERVABILITY_SETTINGS, "otel_semconv_stability_opt_in", "http")
    assert not OBSERVABILITY_SETTINGS.emit_tool_call_attributes
    run(weather_agent(env, Scripted(loop)))
    assert len(env.tool_bodies) > 5
    env.assert_quiet()


@pytest.mark.parametrize("sensitive", [True, False], ids=["sensitive", "not-sensitive"])
def test_a_steer_reaches_the_model_as_the_calls_result(make_env: Any, sensitive: bool) -> None:
    """``response="steer"``: the 5th identical search does not run and the model reads the steer's message as its
    result (Agent Framework would hand it only "Function failed"); a model that changes course finishes normally."""
    env = make_env(sensitive=sensitive, response="steer")
    read: list[str] = []

    class Reading(Scripted):
        def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
            read[:] = [str(c.result) for m in messages for c in (m.contents or []) if c.type == "function_result"]
            return super()._inner_get_response(messages=messages, stream=stream, options=options, **kwargs)

    def script(n: int) -> Reply:
        if read and "spanbreaker: search called 5 times" in read[-1]:
            return "Paris is sunny, as far as I can tell."
        return [("search", {"query": "weather in Paris"})]

    assert run(weather_agent(env, Reading(script))) == "Paris is sunny, as far as I can tell."
    assert len(env.tool_bodies) == 4
    steered = [s for s in env.spans() if (s.attributes or {}).get("spanbreaker.steered")]
    assert [s.name for s in steered] == ["execute_tool search"]
    assert env.processor.stats.trips == 0
    env.assert_nothing_lost()
