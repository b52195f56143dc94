"""Haystack's ``Agent`` (haystack-ai 3.4) under OpenInference's Haystack instrumentor, with spanbreaker's adapter: a
tool span per call (the stock instrumentor makes none) and model-call spans known at start (stock, their kind comes
just after). A looping agent is stopped; healthy look-alikes stay quiet; budgets hold. The model is the only stub."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from haystack.dataclasses import ChatMessage

import spanbreaker
from spanbreaker.signals import Kind

from ..genai_rig import QUERIES, WIDE, Rig, make_rig
from .scripted import agent, loop, queries, scripted

pytestmark = pytest.mark.timeout(60)

QUESTION = [ChatMessage.from_user("What's the weather in Paris?")]


def run(haystack_agent: Any, how: str = "sync") -> Any:
    if how == "async":
        return asyncio.run(asyncio.wait_for(haystack_agent.run_async(messages=QUESTION), 20))
    return haystack_agent.run(messages=QUESTION)


@pytest.mark.parametrize("how", ["sync", "async"])
def test_identical_calls_trip_and_stop_the_run(env: Rig, how: str) -> None:
    model = scripted(loop)
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(agent(env, model), how)
    assert caught.value.detector == "tool_repeat" and caught.value.evidence["identical_calls"] == 5
    assert len(env.tool_bodies) == 4 and model.calls == 5, "the 5th identical search is vetoed before it runs"
    assert [s.name for s in env.blocked()] == ["search"]
    roots = [s for s in env.spans() if s.parent is None]
    assert len(roots) == 1 and roots[0].name.startswith("Agent.run") and roots[0].attributes["spanbreaker.tripped"]
    env.assert_nothing_lost()


def test_parallel_identical_calls_in_one_turn_count_once(env: Rig) -> None:
    """Haystack runs one reply's calls in a thread pool: three identical searches in one turn are one decision."""
    model = scripted(lambda n: [("search", {"query": "weather in Paris"})] * 3)
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(agent(env, model))
    assert caught.value.detector == "tool_repeat"
    assert model.calls == 5 and len(env.tool_bodies) == 12, "stopped in the 5th turn, as one call a turn would be"
    env.assert_nothing_lost()


@pytest.mark.parametrize("script", [QUERIES, WIDE], ids=["healthy", "wide"])
def test_healthy_and_wide_runs_are_quiet(env: Rig, script: list[str]) -> None:
    model = scripted(queries(script))
    reply = run(agent(env, model))
    assert reply["messages"][-1].text == "All sunny." and len(env.tool_bodies) == len(script)
    assert len(env.ran(Kind.LLM)) == len(script) + 1 and len(env.ran(Kind.TOOL)) == len(script)
    env.assert_quiet()


def test_same_call_with_new_results_is_quiet(env: Rig) -> None:
    """Polling a page that changes: the same search, a new result each time, is work, not a loop."""
    model = scripted(lambda n: [("search", {"query": "weather in Paris"})] if n < 8 else "Done.")
    run(agent(env, model, answer=lambda query, n: f"Paris weather at {n}:00: {15 + n}C"))
    assert len(env.tool_bodies) == 8
    env.assert_quiet()


def test_model_call_budget_vetoes_the_next_request(make_env: Callable[..., Rig]) -> None:
    env = make_env(max_model_calls=3)
    model = scripted(queries(WIDE))
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(agent(env, model))
    assert caught.value.detector == "call_budget" and model.calls == 3
    assert [s.name for s in env.blocked()] == ["OpenAIChatGenerator.run"]
    env.assert_nothing_lost()


def test_a_failing_tool_is_an_error_loop(env: Rig) -> None:
    """A tool that raises: Haystack turns the failure into a message for the model (``raise_on_tool_invocation_failure``
    off); the tool span ends in error with the tool's own exception, so the same failure turn after turn is an
    error loop, whatever the arguments."""
    def broken(query: str, n: int) -> str:
        raise ConnectionError(f"search backend down ({query}, attempt {n})")

    haystack_agent = agent(env, scripted(queries([f"weather in city {i}" for i in range(12)])), answer=broken)
    haystack_agent.raise_on_tool_invocation_failure = False
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(haystack_agent)
    assert caught.value.detector == "error_loop" and len(env.tool_bodies) == 4
    assert caught.value.evidence["exception_type"] == "ConnectionError", "the tool's own exception, not Haystack's"
    env.assert_nothing_lost()


def test_hidden_values_stay_hidden_and_the_loop_is_still_stopped(make_env: Callable[..., Rig],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``OPENINFERENCE_HIDE_INPUTS`` / ``..._OUTPUTS``: the instrumentor's trace configuration redacts the tool span's
    arguments and result as well (the adapter makes it with the instrumentor's tracer); the breaker is shown them in
    process (``adapters/openinference.py``), so the loop stops as without the setting."""
    monkeypatch.setenv("OPENINFERENCE_HIDE_INPUTS", "true")
    monkeypatch.setenv("OPENINFERENCE_HIDE_OUTPUTS", "true")
    env = make_env()
    model = scripted(loop)
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(agent(env, model))
    assert caught.value.detector == "tool_repeat" and len(env.tool_bodies) == 4
    tools = env.of_kind(Kind.TOOL)
    assert {(s.attributes or {}).get("input.value") for s in tools} == {"__REDACTED__"}
    assert {(s.attributes or {}).get("output.value") for s in tools} <= {"__REDACTED__", None}
    env.assert_nothing_lost()


def test_hidden_distinct_calls_stay_quiet(make_env: Callable[..., Rig], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENINFERENCE_HIDE_INPUTS", "true")
    monkeypatch.setenv("OPENINFERENCE_HIDE_OUTPUTS", "true")
    env = make_env()
    model = scripted(queries(WIDE))
    run(agent(env, model))
    assert len(env.tool_bodies) == len(WIDE)
    env.assert_quiet()


def test_stock_instrumentor_sees_no_call() -> None:
    """No adapter: no tool span, and the chat generator's span starts bare (its kind set just after), so the breaker
    sees neither a tool call nor a model call: the loop runs to ``max_agent_steps``, and no budget counts."""
    from openinference.instrumentation.haystack import HaystackInstrumentor

    spanbreaker.instrumentation.uninstrument()
    rig = make_rig(max_model_calls=3)
    instrumentor = HaystackInstrumentor()
    instrumentor.instrument(tracer_provider=rig.provider)
    try:
        model = scripted(loop)
        run(agent(rig, model, max_agent_steps=12))
        assert len(rig.tool_bodies) == 12 and model.calls == 12
        assert rig.of_kind(Kind.TOOL) == [] and rig.ledger.keys_at_start(Kind.LLM) == []
        rig.assert_quiet()
    finally:
        instrumentor.uninstrument()
        rig.provider.shutdown()



def test_a_steer_reaches_the_model_as_the_calls_error(make_env: Callable[..., Rig]) -> None:
    """``response="steer"``: the 5th identical search does not run; its ``invoke`` fails with the steer's message (a
    ``ToolInvocationError``, which the ``Agent`` hands the model as the call's error result; a plain exception would
    end the run), and a model that changes course finishes normally."""
    from .scripted import ScriptedModel, tool_results

    env = make_env(response="steer")

    def reply(messages: list[dict[str, Any]]) -> Any:
        results = [str(m.get("content")) for m in messages if m.get("role") == "tool"]
        if results and results[-1].startswith("spanbreaker: search called 5 times"):
            return "Paris is sunny, as far as I can tell."
        return loop(tool_results(messages))

    result = run(agent(env, ScriptedModel(reply)))
    assert result["messages"][-1].text == "Paris is sunny, as far as I can tell."
    assert len(env.tool_bodies) == 4
    steered = [s for s in env.spans() if (s.attributes or {}).get("spanbreaker.steered")]
    assert [s.name for s in steered] == ["search"] and env.processor.stats.trips == 0
    env.assert_nothing_lost()
