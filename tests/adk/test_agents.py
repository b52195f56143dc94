"""Google ADK under the breaker, on ADK's stock OpenTelemetry GenAI spans, without spanbreaker's ADK adapter (what
ADK gives a breaker by itself; ``test_adapter.py`` has the adapter on): real ``LlmAgent`` and ``InMemoryRunner``
with a function tool; the model is a script, the only stub.

ADK sets every attribute of its model and tool spans when they end, so the breaker knows them at start only by
their GenAI names (``generate_content <model>``, ``execute_tool <tool>``). A tool call's arguments and result are
on its span only with content capture on spans (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``
or the same in ``RunConfig.telemetry``), and only at its end: the 5th identical call runs, the trip is decided when
it ends, and the next model call is vetoed at its start. Budgets need no content capture.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.runners import InMemoryRunner
from google.adk.telemetry.context import ContentCapturingMode, TelemetryConfig
from google.genai import types

import spanbreaker
from spanbreaker.signals import Kind

from ..genai_rig import QUERIES, WIDE, Rig, search_body
from .scripted import MODEL, ScriptedLlm, loop, queries, scripted

pytestmark = pytest.mark.timeout(60)

APP = "weather"
SPAN_ONLY = RunConfig(telemetry=TelemetryConfig(capture_message_content=ContentCapturingMode.SPAN_ONLY))
MODEL_SPAN = f"generate_content {MODEL}"


def weather_runner(env: Rig, model: ScriptedLlm, answer: Any = None) -> InMemoryRunner:
    def search(query: str) -> str:
        """Search the web."""
        return search_body(env, query, answer)

    agent = LlmAgent(name="weather_agent", model=model, instruction="Answer using the search tool.", tools=[search])
    return InMemoryRunner(agent=agent, app_name=APP)


def message() -> types.Content:
    return types.Content(role="user", parts=[types.Part(text="What's the weather?")])


def run_async(runner: InMemoryRunner, run_config: RunConfig | None = None) -> list[Any]:
    async def go() -> list[Any]:
        session = await runner.session_service.create_session(app_name=APP, user_id="u")
        return [event async for event in runner.run_async(user_id="u", session_id=session.id,
                                                          new_message=message(), run_config=run_config)]

    return asyncio.run(asyncio.wait_for(go(), 30))


def run_sync(runner: InMemoryRunner) -> list[Any]:
    session = asyncio.run(runner.session_service.create_session(app_name=APP, user_id="u"))
    return list(runner.run(user_id="u", session_id=session.id, new_message=message()))


def healthy_answer(query: str, n: int) -> str:
    return f"{query.split()[-1]}: sunny, {18 + n}C"


@pytest.mark.parametrize("capture", ["environment", "RunConfig"])
def test_identical_calls_trip_and_run_async_raises_tripped(make_env: Any, capture: str) -> None:
    env = make_env("SPAN_ONLY" if capture == "environment" else None)
    model = scripted(loop())
    with pytest.raises(spanbreaker.Tripped) as caught:
        run_async(weather_runner(env, model), SPAN_ONLY if capture == "RunConfig" else None)
    assert caught.value.detector == "tool_repeat"
    assert caught.value.evidence["identical_calls"] == 5
    # the arguments arrive when the tool span ends: the 5th call runs, and the next model call is vetoed at start
    assert len(env.tool_bodies) == 5 and model.calls == 5
    assert [s.name for s in env.blocked()] == [MODEL_SPAN]
    env.assert_trip_marked("tool_repeat")
    # the deciding tool span had ended (an ended span takes no attributes): the blocked call, agent and root carry it
    assert {s.name for s in env.tripped()} == {MODEL_SPAN, "invoke_agent weather_agent",
                                               "invoke_workflow weather_agent"}
    env.assert_nothing_lost()
    assert env.processor.stats.internal_errors == 0


def test_sync_runner_run_raises_adks_runtime_error_caused_by_the_trip(make_env: Any) -> None:
    """``Runner.run`` drives ``run_async`` on a thread and turns any non-``Exception`` into a ``RuntimeError``."""
    env = make_env("SPAN_ONLY")
    model = scripted(loop())
    with pytest.raises(RuntimeError) as caught:
        run_sync(weather_runner(env, model))
    assert str(caught.value) == "Agent run terminated by Tripped."
    assert isinstance(caught.value.__cause__, spanbreaker.Tripped)
    assert caught.value.__cause__.detector == "tool_repeat"
    assert len(env.tool_bodies) == 5 and model.calls == 5
    assert [s.name for s in env.blocked()] == [MODEL_SPAN]
    env.assert_trip_marked("tool_repeat")
    env.assert_nothing_lost()


@pytest.mark.parametrize("capture", ["SPAN_ONLY", None], ids=["span_only", "no_capture"])
@pytest.mark.parametrize("script", [QUERIES, WIDE], ids=["healthy", "wide"])
def test_healthy_and_wide_runs_are_quiet(make_env: Any, capture: str | None, script: list[str]) -> None:
    env = make_env(capture)
    model = scripted(queries(script))
    events = run_async(weather_runner(env, model, healthy_answer if script is QUERIES else None))
    assert env.tool_bodies == script and model.calls == len(script) + 1
    assert events[-1].content.parts[0].text == "All sunny."
    env.assert_quiet()
    env.assert_nothing_lost()
    tools = env.of_kind(Kind.TOOL)
    assert len(tools) == len(script)
    keys = ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result")
    assert all(bool((s.attributes or {}).get(k)) is bool(capture) for s in tools for k in keys)

@pytest.mark.parametrize("capture", ["SPAN_ONLY", None], ids=["span_only", "no_capture"])
def test_model_call_budget_vetoes_the_fourth_model_call(make_env: Any, capture: str | None) -> None:
    env = make_env(capture, max_model_calls=3)
    model = scripted(loop())
    with pytest.raises(spanbreaker.Tripped) as caught:
        run_async(weather_runner(env, model))
    assert caught.value.detector == "call_budget"
    assert model.calls == 3 and len(env.tool_bodies) == 3  # the 4th model call was vetoed before the model ran
    assert [s.name for s in env.blocked()] == [MODEL_SPAN]
    env.assert_trip_marked("call_budget")
    env.assert_nothing_lost()


@pytest.mark.parametrize("capture", ["SPAN_ONLY", None], ids=["span_only", "no_capture"])
def test_token_budget_trips(make_env: Any, capture: str | None) -> None:
    env = make_env(capture, max_tokens=500)
    model = scripted(loop())
    with pytest.raises(spanbreaker.Tripped) as caught:
        run_async(weather_runner(env, model))
    assert caught.value.detector == "token_budget"
    # 120 + 130 + 140 + 150 tokens: decided when the 4th model call ends; the tool call it asked for is vetoed
    assert model.calls == 4 and len(env.tool_bodies) == 3
    assert [s.name for s in env.blocked()] == ["execute_tool search"]
    env.assert_trip_marked("token_budget")
    env.assert_nothing_lost()


def test_without_content_capture_the_loop_is_not_caught(make_env: Any) -> None:
    """ADK's default telemetry puts no tool arguments or results on spans: every call is unknown, never a repeat."""
    env = make_env(None)
    model = scripted(loop(12))
    events = run_async(weather_runner(env, model))
    assert len(env.tool_bodies) == 12 and model.calls == 13
    assert events[-1].content.parts[0].text == "Sunny."
    env.assert_quiet()
    env.assert_nothing_lost()
    tools = env.of_kind(Kind.TOOL)
    assert len(tools) == 12 and not any("gen_ai.tool.call.arguments" in (s.attributes or {}) for s in tools)


def test_identical_parallel_calls_trip(make_env: Any) -> None:
    """Three identical calls per model turn: ADK follows each turn's calls with an ``execute_tool (merged)`` span
    without arguments, which is no call (``conventions.frameworks.NOT_CALLS``): repeats count once per model turn,
    and the fifth turn's calls after the first are vetoed (before, the merged span counted as a change after every
    turn, and 24 identical calls ran unseen)."""
    env = make_env("SPAN_ONLY")
    model = scripted(lambda n: [("search", {"query": "weather in Paris"})] * 3 if n < 24 else "Sunny.")
    with pytest.raises(spanbreaker.Tripped) as caught:
        run_async(weather_runner(env, model))
    assert caught.value.detector == "tool_repeat"
    assert len(env.tool_bodies) == 13 and model.calls == 5  # four turns of three, then the fifth turn's first
    assert [s.name for s in env.blocked()] == ["execute_tool search", "execute_tool search"]
    assert "execute_tool (merged)" in {s.name for s in env.spans()}
    env.assert_nothing_lost()
