"""Microsoft AutoGen AgentChat under the breaker: autogen-core's own GenAI spans, with spanbreaker's AutoGen adapter
(tool arguments and results on the ``execute_tool`` spans; the stop out of the tool task and the team runtime) and
OpenInference's OpenAI instrumentor for the model calls. A looping ``AssistantAgent`` or ``RoundRobinGroupChat`` is
stopped with ``Tripped`` out of ``run``; healthy look-alikes stay quiet; call budgets veto. Stock (no adapter), a
tool span carries no arguments or results, and the loop runs to ``max_tool_iterations``. Real ``AssistantAgent``,
teams and ``OpenAIChatCompletionClient``; the model is a script served to the client in process, the only stub.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import MaxMessageTermination
from autogen_agentchat.teams import RoundRobinGroupChat

import spanbreaker
from spanbreaker.signals import Kind

from ..genai_rig import QUERIES, WIDE, Rig, search_body
from .scripted import MODEL, ScriptedModel, client_for, loop, queries, scripted

pytestmark = pytest.mark.timeout(60)

MAX_TOOL_ITERATIONS = 30
"""AutoGen's own bound on the tool loop, set high as an application that lets its agent work would."""


def weather_agent(env: Rig, model: ScriptedModel, answer: Any = None, name: str = "weather_agent",
                  iterations: int = MAX_TOOL_ITERATIONS) -> AssistantAgent:
    async def search(query: str) -> str:
        """Search the web."""
        return search_body(env, query, answer)

    return AssistantAgent(name, model_client=client_for(model), tools=[search], max_tool_iterations=iterations,
                          system_message="You look things up.")


def assert_trip_marked(env: Rig, detector: str) -> None:
    """``Rig.assert_trip_marked`` for AutoGen, whose agents make a ``create_agent`` span when constructed: a trace
    of its own, before the run, which the trip does not concern."""
    assert env.blocked(), "no span was marked blocked"
    marked = env.tripped()
    assert {(s.attributes or {}).get("spanbreaker.detector") for s in marked} == {detector}
    assert any(s.name.startswith("invoke_agent") for s in marked)
    roots = [s for s in env.spans() if s.parent is None and not s.name.startswith("create_agent")]
    assert roots and all((s.attributes or {}).get("spanbreaker.tripped") for s in roots)


def run(agent_or_team: Any, how: str = "run", prompt: str = "What's the weather?") -> Any:
    async def go() -> Any:
        if how == "stream":
            result = None
            async for event in agent_or_team.run_stream(task=prompt):
                result = event
            return result
        return await agent_or_team.run(task=prompt)

    return asyncio.run(asyncio.wait_for(go(), 20))


@pytest.mark.parametrize("how", ["run", "stream"])
def test_identical_calls_trip_and_stop_the_run(make_env: Any, how: str) -> None:
    env = make_env()
    model = scripted(loop(calls=MAX_TOOL_ITERATIONS))
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(weather_agent(env, model), how)
    assert caught.value.detector == "tool_repeat"
    assert caught.value.evidence["identical_calls"] == 5
    assert len(env.tool_bodies) == 4 and model.calls == 5  # the fifth identical call is vetoed before it runs
    assert [s.name for s in env.blocked()] == ["execute_tool search"]
    assert_trip_marked(env, "tool_repeat")
    env.assert_nothing_lost()


def test_parallel_identical_calls_in_one_turn_stop_the_run(make_env: Any) -> None:
    """Three identical calls per turn, run concurrently by AutoGen (``asyncio.gather`` in one tool task): counted once
    per model turn, the loop across turns trips, and the agent is not left waiting on its dead tool task."""
    env = make_env()
    model = scripted(lambda n: [("search", {"query": "weather in Paris"})] * 3)
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(weather_agent(env, model))
    assert caught.value.detector == "tool_repeat"
    assert model.calls == 5 and len(env.tool_bodies) == 12
    assert [s.name for s in env.blocked()] == ["execute_tool search"] * 3
    env.assert_nothing_lost()


@pytest.mark.parametrize("script", [QUERIES, WIDE], ids=["healthy", "wide"])
def test_healthy_and_wide_runs_are_quiet(make_env: Any, script: list[str]) -> None:
    env = make_env()
    answer = (lambda q, i: f"{q.split()[-1]}: sunny, {18 + i}C") if script is QUERIES else None
    result = run(weather_agent(env, scripted(queries(script)), answer))
    assert result.messages[-1].content == "All sunny."
    assert env.tool_bodies == script
    env.assert_quiet()
    env.assert_nothing_lost()


def test_same_call_with_new_results_is_quiet(make_env: Any) -> None:
    """The loop's twin: the same search every time, but the page changes (a status being polled)."""
    env = make_env()
    result = run(weather_agent(env, scripted(loop(calls=8)), lambda q, i: f"update #{i}: still raining"))
    assert result.messages[-1].content == "Sunny."
    assert len(env.tool_bodies) == 8
    env.assert_quiet()


def test_model_call_budget_vetoes_the_next_model_call(make_env: Any) -> None:
    """AutoGen makes no model-call span; OpenInference's OpenAI instrumentor does, under the client: the fourth is
    vetoed before the request is sent, and ``Tripped`` comes out of ``run`` (the model call runs on the agent's
    task)."""
    env = make_env(max_model_calls=3)
    model = scripted(queries(WIDE))
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(weather_agent(env, model))
    assert caught.value.detector == "call_budget"
    assert model.calls == 3 and len(env.ran(Kind.LLM)) == 3
    assert len(env.blocked()) == 1 and env.blocked()[0].name == "ChatCompletion"
    assert_trip_marked(env, "call_budget")
    env.assert_nothing_lost()


def test_tool_call_budget_vetoes_the_next_tool_call(make_env: Any) -> None:
    env = make_env(max_tool_calls=3)
    model = scripted(queries(WIDE))
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(weather_agent(env, model))
    assert caught.value.detector == "call_budget"
    assert len(env.tool_bodies) == 3 and model.calls == 4
    assert [s.name for s in env.blocked()] == ["execute_tool search"]
    env.assert_nothing_lost()


def test_stock_spans_do_not_catch_the_loop(make_env: Any) -> None:
    """No adapter: autogen-core's ``execute_tool`` span has the tool's name but no arguments or result, so every call
    is unknown, never identical. Nothing trips (and nothing false trips); the loop runs to ``max_tool_iterations``."""
    env = make_env(adapter=False)
    model = scripted(loop(calls=100))
    run(weather_agent(env, model, iterations=12))
    assert len(env.tool_bodies) == 12
    env.assert_quiet()
    env.assert_nothing_lost()


# --------------------------------------------------------------------------------------------------- teams
def team_of(env: Rig, model: ScriptedModel, answer: Any = None, turns: int = 40) -> RoundRobinGroupChat:
    """Two assistants taking turns (one tool iteration each, AutoGen's default), stopped by AutoGen after
    ``turns`` messages at the latest."""
    return RoundRobinGroupChat([weather_agent(env, model, answer, "researcher", 1),
                                weather_agent(env, model, answer, "checker", 1)],
                               termination_condition=MaxMessageTermination(turns))


@pytest.mark.parametrize("how", ["run", "stream"])
def test_team_loop_trips_and_stops_team_run(make_env: Any, how: str) -> None:
    """Each turn runs in AutoGen's embedded runtime, in a task of its own: the adapter holds one span around the team
    run (one trace), and the trip leaves the runtime and comes out of ``team.run`` rather than leaving it waiting.
    Each agent is its own scope: the researcher's fifth identical search is the one vetoed."""
    env = make_env()
    model = scripted(loop(calls=100))
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(team_of(env, model), how)
    assert caught.value.detector == "tool_repeat"
    assert len(env.tool_bodies) == 8 and model.calls == 9
    assert [s.name for s in env.blocked()] == ["execute_tool search"]
    roots = [s for s in env.spans() if s.parent is None and not s.name.startswith("create_agent")]
    assert [s.name for s in roots] == ["RoundRobinGroupChat.run_stream"]
    assert_trip_marked(env, "tool_repeat")
    env.assert_nothing_lost()


def test_team_healthy_run_is_quiet(make_env: Any) -> None:
    env = make_env()
    model = scripted(loop(calls=100))
    result = run(team_of(env, model, lambda q, i: f"update #{i}", turns=16))
    assert result.stop_reason and "Maximum number of messages" in result.stop_reason
    env.assert_quiet()
    env.assert_nothing_lost()


def test_team_model_call_budget(make_env: Any) -> None:
    env = make_env(max_model_calls=3)
    model = scripted(loop(calls=100))
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(team_of(env, model, lambda q, i: f"update #{i}"))
    assert caught.value.detector == "call_budget"
    assert model.calls == 3
    env.assert_nothing_lost()


@pytest.mark.parametrize("value", ["false", "NO_CONTENT"])
def test_content_capture_off_keeps_the_calls_off_the_spans_and_still_stops_the_loop(make_env: Any, monkeypatch: Any,
                                                                                   value: str) -> None:
    """The GenAI instrumentations' content switch set off: the adapter leaves the tool spans as AutoGen makes them
    (no arguments, no result) and shows the breaker each call in process instead, so the loop still stops at the
    5th identical call, and nothing of the calls reaches an exported span."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", value)
    env = make_env()
    model = scripted(loop(calls=100))
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(weather_agent(env, model, iterations=12))
    assert caught.value.detector == "tool_repeat" and len(env.tool_bodies) == 4 and model.calls == 5
    tools = env.of_kind(Kind.TOOL)
    assert len(tools) == 5 and not any(key in (span.attributes or {}) for span in tools
                                       for key in ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result"))
    autogen = [dict(span.attributes or {}) for span in env.spans()
               if span.instrumentation_scope is not None and span.instrumentation_scope.name == "autogen-core"]
    assert autogen and "weather in Paris" not in repr(autogen)  # (the OpenAI instrumentor's spans: its own settings)
    env.assert_nothing_lost()


def test_content_capture_off_still_counts_budgets(make_env: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "false")
    env = make_env(max_tool_calls=3)
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(weather_agent(env, scripted(loop(calls=100)), iterations=12))
    assert caught.value.detector == "call_budget" and len(env.tool_bodies) == 3
    env.assert_nothing_lost()


# ------------------------------------------------------------------------------ OpenInference's AutoGen instrumentor
@pytest.fixture
def openinference_autogen(switchboard: Any) -> Any:
    """OpenInference's AutoGen instrumentor on as well (what the launcher does when it is installed): its TOOL span
    ``<agent>.<tool>`` carries the call around autogen-core's own ``execute_tool`` span."""
    from openinference.instrumentation.autogen_agentchat import AutogenAgentChatInstrumentor

    instrumentor = AutogenAgentChatInstrumentor()
    instrumentor.instrument(tracer_provider=switchboard)
    yield instrumentor
    instrumentor.uninstrument()


def test_both_layers_count_a_tool_call_once(make_env: Any, openinference_autogen: Any) -> None:
    """Two instrumentors, one call: the budget counts it once (it counted each call twice, and ``max_tool_calls=3``
    stopped the run at the 2nd search, after 1 ran): autogen-core's GenAI ``execute_tool`` span directly inside
    OpenInference's tool span of the same tool is the same call."""
    env = make_env(max_tool_calls=3)
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(weather_agent(env, scripted(queries(WIDE))))
    assert caught.value.detector == "call_budget" and len(env.tool_bodies) == 3
    env.assert_nothing_lost()


def test_both_layers_catch_the_loop(make_env: Any, openinference_autogen: Any) -> None:
    env = make_env()
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(weather_agent(env, scripted(loop(calls=100)), iterations=12))
    assert caught.value.detector == "tool_repeat" and len(env.tool_bodies) == 4
    env.assert_nothing_lost()


# ------------------------------------------------------------------------------------------ agents as tools
def coordinator(env: Rig, model: ScriptedModel, researcher_answers: Any = None, iterations: int = 30) -> Any:
    """A coordinator whose one tool is a researcher agent (``AgentTool``, a streaming tool): the researcher answers
    each task with a text (``researcher_answers(n)``, the same one by default), counted in ``env.tool_bodies``."""
    from autogen_agentchat.tools import AgentTool

    def answer(n: int) -> str:
        env.tool_bodies.append(f"task {n}")
        return researcher_answers(n) if researcher_answers is not None else "Paris: sunny, 21 C."

    researcher = AssistantAgent("researcher", model_client=client_for(scripted(lambda n: answer(len(env.tool_bodies)))),
                                description="Looks things up.", system_message="You look things up.")
    return AssistantAgent("coordinator", model_client=client_for(model), tools=[AgentTool(researcher)],
                          max_tool_iterations=iterations, system_message="You delegate research.")


def tasks(qs: list[str]) -> Any:
    return lambda n: [("researcher", {"task": qs[n]})] if n < len(qs) else "All done."


def test_an_agent_called_as_a_tool_with_the_same_task_and_answer_is_stopped(make_env: Any) -> None:
    """``AgentTool`` runs through ``BaseStreamTool.run_json_stream``: the adapter puts the task on its span at start
    and the researcher's answer at the end, so the coordinator's fifth identical delegation is vetoed (stock, the
    span carried neither: every delegation was unknown and ran)."""
    env = make_env()
    model = scripted(lambda n: [("researcher", {"task": "weather in Paris"})])
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(coordinator(env, model))
    assert caught.value.detector == "tool_repeat" and caught.value.evidence["identical_calls"] == 5
    assert len(env.tool_bodies) == 4 and model.calls == 5
    assert [s.name for s in env.blocked()] == ["execute_tool researcher"]
    env.assert_nothing_lost()


def test_an_agent_called_as_a_tool_with_new_tasks_is_quiet(make_env: Any) -> None:
    env = make_env()
    run(coordinator(env, scripted(tasks(WIDE))))
    assert len(env.tool_bodies) == len(WIDE)
    env.assert_quiet()


def test_stock_spans_do_not_catch_a_delegation_loop(make_env: Any) -> None:
    env = make_env(adapter=False)
    run(coordinator(env, scripted(lambda n: [("researcher", {"task": "weather in Paris"})] if n < 12 else "ok"),
                    iterations=12))
    assert len(env.tool_bodies) == 12
    env.assert_quiet()


def test_a_steer_reaches_the_model_as_the_calls_error(make_env: Any) -> None:
    """``response="steer"``: the 5th identical search does not run; AutoGen's workbench turns the ``Steered`` raised
    where its span starts into the call's error result, which the model reads; a model that changes course
    finishes normally."""
    env = make_env(response="steer")

    def reply(messages: list[dict[str, Any]]) -> Any:
        results = [str(m.get("content")) for m in messages if m.get("role") == "tool"]
        if results and "spanbreaker: search called 5 times" in results[-1]:
            return "Paris is sunny, as far as I can tell."
        return [("search", {"query": "weather in Paris"})]

    result = run(weather_agent(env, ScriptedModel(reply, model=MODEL)))
    assert result.messages[-1].content == "Paris is sunny, as far as I can tell."
    assert len(env.tool_bodies) == 4
    steered = [s for s in env.spans() if (s.attributes or {}).get("spanbreaker.steered")]
    assert [s.name for s in steered] == ["execute_tool search"] and env.processor.stats.trips == 0
    env.assert_nothing_lost()
