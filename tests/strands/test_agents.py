"""Strands Agents under the breaker, on its native OpenTelemetry GenAI spans and the spanbreaker adapter: a loop
trips and stops the run, with either tool executor, in either telemetry mode, sync or async; healthy look-alikes
stay quiet. Real ``Agent`` and ``@tool``, Strands' own telemetry; the model is a script, the only stub.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from strands import Agent, tool
from strands.tools.executors import ConcurrentToolExecutor, SequentialToolExecutor

import spanbreaker
from spanbreaker.signals import Kind

from ..genai_rig import QUERIES, WIDE, Rig, search_body
from .scripted import Reply, Scripted

pytestmark = pytest.mark.timeout(60)

LIMITS = {"turns": 30}
"""Strands' own bound on a run: what a loop would otherwise run into."""
EXECUTORS = {"concurrent": ConcurrentToolExecutor, "sequential": SequentialToolExecutor}


def queries(qs: list[str]) -> Any:
    return lambda n: [("search", {"query": qs[n]})] if n < len(qs) else "All sunny."


def loop(n: int) -> Reply:
    return [("search", {"query": "weather in Paris"})]


def weather_agent(env: Rig, scripted: Scripted, answer: Any = None, executor: str = "concurrent") -> Agent:
    @tool
    def search(query: str) -> str:
        """Search the web.

        Args:
            query: what to look up
        """
        return search_body(env, query, answer)

    return Agent(model=scripted, tools=[search], name="weather_agent", callback_handler=None,
                 system_prompt="You look things up.", tool_executor=EXECUTORS[executor]())


def run(agent: Agent, how: str, prompt: str = "What's the weather?") -> Any:
    if how == "async":
        return asyncio.run(asyncio.wait_for(agent.invoke_async(prompt, limits=LIMITS), 20))
    return agent(prompt, limits=LIMITS)


@pytest.mark.parametrize("how", ["sync", "async"])
@pytest.mark.parametrize("executor", ["concurrent", "sequential"])
@pytest.mark.parametrize("mode", ["default", "latest"])
def test_identical_calls_trip_and_stop_the_run(make_env: Any, mode: str, executor: str, how: str) -> None:
    env = make_env(mode)
    scripted = Scripted(loop)
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(weather_agent(env, scripted, executor=executor), how)
    assert caught.value.detector == "tool_repeat"
    assert caught.value.evidence["identical_calls"] == 5
    assert len(env.tool_bodies) == 4 and scripted.calls == 5  # the fifth identical call is vetoed before it runs
    # ... and the run stops there: no later model call is made (and vetoed) after an empty tool result
    assert [s.name for s in env.blocked()] == ["execute_tool search"]
    env.assert_trip_marked("tool_repeat")
    env.assert_nothing_lost()
    agent_span = next(s for s in env.spans() if s.name == "invoke_agent weather_agent")
    assert (agent_span.attributes or {}).get("strands.cancellation.type") == "Tripped"  # Strands' own mark stays


@pytest.mark.parametrize("executor", ["concurrent", "sequential"])
@pytest.mark.parametrize("mode", ["default", "latest"])
@pytest.mark.parametrize("script", [QUERIES, WIDE], ids=["healthy", "wide"])
def test_healthy_and_wide_runs_are_quiet(make_env: Any, mode: str, executor: str, script: list[str]) -> None:
    env = make_env(mode)
    answer = (lambda q, i: f"{q.split()[-1]}: sunny, {18 + i}C") if script is QUERIES else None
    result = weather_agent(env, Scripted(queries(script)), answer, executor)("Weather?", limits=LIMITS)
    assert str(result).strip() == "All sunny."
    assert env.tool_bodies == script
    env.assert_quiet()
    env.assert_nothing_lost()


def test_model_calls_are_model_calls_at_start(make_env: Any) -> None:
    """``chat`` spans start as LLM calls (with the model), so model-call budgets count them and can veto one."""
    env = make_env(max_model_calls=3)
    scripted = Scripted(queries(QUERIES))
    with pytest.raises(spanbreaker.Tripped) as caught:
        weather_agent(env, scripted)("Weather?", limits=LIMITS)
    assert caught.value.detector == "call_budget"
    assert scripted.calls == 3 and len(env.ran(Kind.LLM)) == 3  # the fourth model call is vetoed before it runs
    assert all(keys and "gen_ai.request.model" in keys for keys in env.ledger.keys_at_start(Kind.LLM))
    env.assert_nothing_lost()


def test_token_budget_stops_the_run(make_env: Any) -> None:
    env = make_env(max_tokens=300)
    scripted = Scripted(queries(WIDE))
    with pytest.raises(spanbreaker.Tripped) as caught:
        weather_agent(env, scripted)("Zones?", limits=LIMITS)
    assert caught.value.detector == "token_budget"
    assert scripted.calls < 7
    env.assert_nothing_lost()


def test_cost_budget_counts_strands_default_bedrock_model(make_env: Any) -> None:
    """Strands' default model is a Bedrock Claude, named by its cross-region id under Strands' own
    ``gen_ai.system`` ("strands-agents"): priced as Bedrock prices it, so ``max_cost_usd`` stops a long run (before,
    such a call cost nothing and the budget never counted it)."""
    env = make_env(max_cost_usd=0.0015)  # Claude Sonnet 4 on Bedrock: $0.0006-0.0007 a call here
    scripted = Scripted(queries(WIDE), model_id="us.anthropic.claude-sonnet-4-20250514-v1:0")
    with pytest.raises(spanbreaker.Tripped) as caught:
        weather_agent(env, scripted)("Zones?", limits=LIMITS)
    assert caught.value.detector == "cost_budget"
    assert scripted.calls == 3  # $0.0019 after the third call: the fourth is vetoed before it runs
    env.assert_nothing_lost()


def test_parallel_identical_calls_in_one_turn_stop_the_run(make_env: Any) -> None:
    """Three identical calls per turn on the concurrent executor: counted once per model turn (by design), the
    loop across turns still trips, and the sibling tool tasks are cancelled with their spans ended."""
    env = make_env()
    scripted = Scripted(lambda n: [("search", {"query": "weather in Paris"})] * 3)
    with pytest.raises(spanbreaker.Tripped) as caught:
        weather_agent(env, scripted)("Weather?", limits=LIMITS)
    assert caught.value.detector == "tool_repeat"
    env.assert_nothing_lost()


def test_steer_reaches_the_model_as_the_tools_error(make_env: Any) -> None:
    """``response="steer"``: Strands hands the ``Steered`` to the model as the tool's error result; the loop
    then trips on the next call."""
    env = make_env(response="steer")
    scripted = Scripted(loop)
    with pytest.raises(spanbreaker.Tripped):
        weather_agent(env, scripted)("Weather?", limits=LIMITS)
    assert len(env.tool_bodies) == 4 and scripted.calls == 6
    env.assert_nothing_lost()


@pytest.mark.parametrize("mode", ["redacted", "redacted-default"])
def test_redacted_calls_are_unknown_not_identical(make_env: Any, mode: str) -> None:
    """Strands' redaction writes ``[REDACTED]`` for every argument and result: six different calls are not one
    call repeated six times."""
    env = make_env(mode)
    weather_agent(env, Scripted(queries(WIDE)))("Zones?", limits=LIMITS)
    assert env.tool_bodies == WIDE
    env.assert_quiet()
    env.assert_nothing_lost()


def test_instrument_puts_strands_on_the_breakers_provider(make_env: Any) -> None:
    """``spanbreaker.instrument(frameworks=["strands"])`` on a provider of the application's."""
    env = make_env(instrument=False)
    from opentelemetry.sdk.trace import TracerProvider

    provider = TracerProvider()
    try:
        processor = spanbreaker.instrument(tracer_provider=provider, frameworks=["strands"])
        assert processor is not None
        with pytest.raises(spanbreaker.Tripped):
            weather_agent(env, Scripted(loop))("Weather?", limits=LIMITS)
        assert processor.stats.trips == 1
        assert processor.stats.spans_started == processor.stats.spans_ended
    finally:
        spanbreaker.instrumentation.uninstrument()
        provider.shutdown()


def test_uninstrument_puts_strands_back(make_env: Any) -> None:
    from strands.telemetry.tracer import Tracer
    from strands.tools.executors._executor import ToolExecutor

    from spanbreaker.adapters.strands import ADAPTER

    before = {(owner, name): vars(owner)[name] for owner, names in (
        (Tracer, ("_start_span", "start_tool_call_span", "end_tool_call_span", "end_span_with_cancellation")),
        (ToolExecutor, ("_stream_with_trace",)), (ConcurrentToolExecutor, ("_task", "_execute"))) for name in names}
    make_env()
    assert all(vars(owner)[name] is not value for (owner, name), value in before.items())
    ADAPTER.uninstrument()
    assert all(vars(owner)[name] is value for (owner, name), value in before.items())


def test_unknown_strands_internals_leave_strands_as_it_is(make_env: Any, monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """A Strands whose private internals differ from the measured ones: a warning, and Strands untouched."""
    from strands.telemetry.tracer import Tracer

    def _start_span(self: Any, span_name: str, parent_span: Any = None, attributes: Any = None,
                    span_kind: Any = None, force_root: bool = False, links: Any = None, extra: Any = None) -> Any:
        raise AssertionError("not called here")

    monkeypatch.setattr(Tracer, "_start_span", _start_span)
    before = dict(vars(Tracer))
    with caplog.at_level("WARNING", logger="spanbreaker"):
        make_env()
    assert "could not instrument Strands" in caplog.text
    assert dict(vars(Tracer)) == before
