"""Google ADK with spanbreaker's ADK adapter (what ``spanbreaker.instrument()`` and the launcher switch on): each tool
call is shown to the breaker in process when its span starts (the arguments the model asked for) and before it ends
(ADK's function response), so the 5th identical call is vetoed before it runs, with ADK's default telemetry (no
content on spans, where stock nothing is caught) and with content capture on (where stock the call ran and only the
next model call was vetoed). The exported spans are ADK's own. Real ``LlmAgent`` and ``InMemoryRunner``; the model
is a script, the only stub.
"""

from __future__ import annotations

from typing import Any

import pytest

import spanbreaker
from spanbreaker.signals import Kind

from ..genai_rig import QUERIES, WIDE
from .scripted import loop, queries, scripted
from .test_agents import healthy_answer, run_async, run_sync, weather_runner

pytestmark = pytest.mark.timeout(60)

CAPTURES = pytest.mark.parametrize("capture", [None, "SPAN_ONLY"], ids=["no_capture", "span_only"])
CONTENT_KEYS = ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result")


@CAPTURES
def test_the_fifth_identical_call_is_vetoed_before_it_runs(make_env: Any, capture: str | None) -> None:
    env = make_env(capture, adapter=True)
    model = scripted(loop(30))
    with pytest.raises(spanbreaker.Tripped) as caught:
        run_async(weather_runner(env, model))
    assert caught.value.detector == "tool_repeat" and caught.value.evidence["identical_calls"] == 5
    assert len(env.tool_bodies) == 4 and model.calls == 5
    assert [s.name for s in env.blocked()] == ["execute_tool search"]
    env.assert_trip_marked("tool_repeat")
    env.assert_nothing_lost()
    tools = env.of_kind(Kind.TOOL)
    assert all(bool((s.attributes or {}).get(key)) is bool(capture) for s in tools[:4] for key in CONTENT_KEYS), (
        "the adapter adds nothing to ADK's spans")


def test_the_sync_runner_raises_adks_runtime_error_caused_by_the_trip(make_env: Any) -> None:
    env = make_env(None, adapter=True)
    with pytest.raises(RuntimeError) as caught:
        run_sync(weather_runner(env, scripted(loop(30))))
    assert isinstance(caught.value.__cause__, spanbreaker.Tripped)
    assert caught.value.__cause__.detector == "tool_repeat" and len(env.tool_bodies) == 4
    env.assert_nothing_lost()


@CAPTURES
@pytest.mark.parametrize("script", [QUERIES, WIDE], ids=["healthy", "wide"])
def test_healthy_and_wide_runs_are_quiet(make_env: Any, capture: str | None, script: list[str]) -> None:
    env = make_env(capture, adapter=True)
    model = scripted(queries(script))
    events = run_async(weather_runner(env, model, healthy_answer if script is QUERIES else None))
    assert env.tool_bodies == script and events[-1].content.parts[0].text == "All sunny."
    env.assert_quiet()
    env.assert_nothing_lost()


def test_the_same_call_with_new_results_is_quiet(make_env: Any) -> None:
    """The loop's twin, content capture off: the same search every time, the answer moving (a status polled)."""
    env = make_env(None, adapter=True)
    model = scripted(loop(8))
    events = run_async(weather_runner(env, model, lambda query, n: f"update #{n}: still raining"))
    assert len(env.tool_bodies) == 8 and events[-1].content.parts[0].text == "Sunny."
    env.assert_quiet()


def test_identical_parallel_calls_are_vetoed_in_the_fifth_turn(make_env: Any) -> None:
    """Three identical calls per model turn, content capture off: each call shown in its own task's context, repeats
    counted once per turn; the fifth turn's calls are vetoed before they run."""
    env = make_env(None, adapter=True)
    model = scripted(lambda n: [("search", {"query": "weather in Paris"})] * 3 if n < 24 else "Sunny.")
    with pytest.raises(spanbreaker.Tripped) as caught:
        run_async(weather_runner(env, model))
    assert caught.value.detector == "tool_repeat"
    assert len(env.tool_bodies) == 12 and model.calls == 5
    assert [s.name for s in env.blocked()] == ["execute_tool search"] * 3
    env.assert_nothing_lost()


def test_a_steer_reaches_the_model_as_the_calls_error(make_env: Any) -> None:
    """``response="steer"``: the 5th identical search does not run and the model reads the steer's message as the
    call's response (``{"error": ...}``; stock ADK would have let the ``Steered`` end ``run_async``); a model that
    changes course finishes normally."""
    from google.adk.models.llm_request import LlmRequest

    from .scripted import ScriptedLlm

    read: list[str] = []

    class Reading(ScriptedLlm):
        async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> Any:
            read[:] = [str(p.function_response.response) for c in llm_request.contents for p in (c.parts or [])
                       if p.function_response is not None]
            async for response in super().generate_content_async(llm_request, stream):
                yield response

    def script(n: int) -> Any:
        if read and "spanbreaker: search called 5 times" in read[-1]:
            return "Paris is sunny, as far as I can tell."
        return [("search", {"query": "weather in Paris"})]

    env = make_env(None, adapter=True, response="steer")
    events = run_async(weather_runner(env, Reading(model="scripted-model", script=script)))
    assert events[-1].content.parts[0].text == "Paris is sunny, as far as I can tell."
    assert len(env.tool_bodies) == 4 and read[-1].startswith("{'error': 'spanbreaker: search called 5 times")
    steered = [s for s in env.spans() if (s.attributes or {}).get("spanbreaker.steered")]
    assert [s.name for s in steered] == ["execute_tool search"]
    assert env.processor.stats.trips == 0
    env.assert_nothing_lost()
