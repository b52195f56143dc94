"""CrewAI crews under the breaker, end to end, in both instrumentor modes, with the real OpenInference
instrumentor and a scripted model.

A looping agent is stopped before CrewAI's own guard (five identical calls) and long before ``max_iter``; the stop
reaches the caller as ``spanbreaker.Tripped`` out of ``crew.kickoff()`` even in event-listener mode, where the
spans start on CrewAI's handler threads; every span is exported once with the trip marks. A healthy run and a
wide one (six different queries, one answer) stay quiet.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import spanbreaker

from .conftest import CrewAIEnv
from .scripted import ANSWERS, CREWAI_GUARD, HEALTHY_QUERIES, KICKOFFS, MODES, WIDE_QUERIES, build, kickoff

LOOP_DETECTOR = "tool_repeat"
LOOP_TOOL_CALLS = 4
"""Tool executions a looping agent makes: the 5th identical call is vetoed before it runs (CrewAI's own guard
would let the 5th run and stop there)."""


@pytest.mark.parametrize("how", KICKOFFS)
@pytest.mark.parametrize("mode", MODES)
def test_loop_is_stopped_and_the_stop_reaches_the_caller(make_env: Callable[..., CrewAIEnv], mode: str,
                                                         how: str) -> None:
    env = make_env(mode)
    crew, calls = build("loop")
    with pytest.raises(spanbreaker.Tripped) as caught:
        kickoff(crew, how)
    trip = caught.value
    assert type(trip) is spanbreaker.Tripped and trip.detector == LOOP_DETECTOR
    assert calls.tools == LOOP_TOOL_CALLS < CREWAI_GUARD
    assert calls.model == LOOP_TOOL_CALLS + 1
    env.assert_nothing_lost()
    spans = env.spans()
    assert {f"{s.context.trace_id:032x}" for s in spans if s.context is not None} == {trip.trace_id}
    blocked = env.marked("spanbreaker.blocked")
    assert len(blocked) == 1 and blocked[0].attributes["spanbreaker.detector"] == LOOP_DETECTOR
    assert blocked[0].name == "search.run" and blocked[0].attributes["openinference.span.kind"] == "TOOL"
    roots = [s for s in spans if s.parent is None]
    assert len(roots) == 1 and roots[0].attributes["spanbreaker.tripped"] is True
    assert roots[0].name == ("crew.kickoff" if mode == "events" else f"Crew_{crew.id}.kickoff")
    agents = env.of_kind("AGENT")
    if how == "akickoff" and mode == "wrapper":  # the instrumentor wraps the sync task path only
        assert agents == []
    else:
        assert len(agents) == 1 and agents[0].attributes["spanbreaker.tripped"] is True
    record = env.processor.trip_record(trip.trace_id)
    assert record is not None and record.detector == LOOP_DETECTOR
    assert any(event.name == "spanbreaker.trip" for s in spans for event in s.events)


@pytest.mark.parametrize("mode", MODES)
def test_values_the_instrumentor_hides_stay_hidden_and_the_loop_is_still_stopped(
        make_env: Callable[..., CrewAIEnv], monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """``OPENINFERENCE_HIDE_INPUTS`` / ``..._OUTPUTS``: the tool spans carry ``__REDACTED__``; the breaker is shown the
    values in process (``adapters/openinference.py``) and stops the loop at the same call; a wide run stays quiet."""
    monkeypatch.setenv("OPENINFERENCE_HIDE_INPUTS", "true")
    monkeypatch.setenv("OPENINFERENCE_HIDE_OUTPUTS", "true")
    env = make_env(mode)
    crew, calls = build("loop")
    with pytest.raises(spanbreaker.Tripped) as caught:
        kickoff(crew, "kickoff")
    assert caught.value.detector == LOOP_DETECTOR and calls.tools == LOOP_TOOL_CALLS
    tools = env.of_kind("TOOL")
    assert tools and {s.attributes.get("input.value") for s in tools} == {"__REDACTED__"}
    env.assert_nothing_lost()


@pytest.mark.parametrize("mode", MODES)
def test_hidden_wide_research_stays_quiet(make_env: Callable[..., CrewAIEnv], monkeypatch: pytest.MonkeyPatch,
                                          mode: str) -> None:
    monkeypatch.setenv("OPENINFERENCE_HIDE_INPUTS", "true")
    monkeypatch.setenv("OPENINFERENCE_HIDE_OUTPUTS", "true")
    env = make_env(mode)
    crew, calls = build("wide")
    assert str(kickoff(crew, "kickoff")) == ANSWERS["wide"]
    assert calls.queries == list(WIDE_QUERIES) and env.stats.trips == 0
    env.assert_nothing_lost()


@pytest.mark.parametrize("how", ["kickoff", "akickoff"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("case", "queries"), [("healthy", HEALTHY_QUERIES), ("wide", WIDE_QUERIES)])
def test_healthy_and_wide_runs_stay_quiet(make_env: Callable[..., CrewAIEnv], mode: str, how: str, case: str,
                                          queries: tuple[str, ...]) -> None:
    env = make_env(mode)
    crew, calls = build(case)
    assert str(kickoff(crew, how)) == ANSWERS[case]
    assert calls.queries == list(queries)
    assert env.stats.trips == 0 and env.stats.warnings == 0
    assert env.marked("spanbreaker.tripped") == []
    env.assert_nothing_lost()
    assert len(env.of_kind("TOOL")) == len(queries)
    assert len(env.of_kind("LLM")) == (len(queries) + 1 if mode == "events" else 0)


@pytest.mark.parametrize("mode", MODES)
def test_observe_mode_marks_and_lets_crewai_guard_end_the_loop(make_env: Callable[..., CrewAIEnv],
                                                              mode: str) -> None:
    from crewai.tools.tool_failure import ToolExecutionFailedError

    env = make_env(mode, mode="observe")
    crew, calls = build("loop")
    with pytest.raises(ToolExecutionFailedError, match="5 times"):
        crew.kickoff()
    assert calls.tools == CREWAI_GUARD
    assert env.stats.trips == 1 and env.stats.blocked == 0
    assert env.marked("spanbreaker.tripped")
    if mode == "wrapper":
        env.assert_nothing_lost()
    else:  # CrewAI's own failure leaves its event pairs unbalanced: the listener never ends the agent and crew spans
        stats = env.stats
        assert stats.spans_started - stats.spans_ended == 2 == stats.spans_started - len(env.spans())
        assert {s.name for s in env.spans()} >= {"search.run", "scripted.llm_call"}


def test_a_trip_found_at_a_model_span_start_stops_the_crew_in_event_mode(
        make_env: Callable[..., CrewAIEnv]) -> None:
    """A budget trip (model calls) vetoes a model call whose span starts on CrewAI's handler thread: the model is
    not called again, and the trip comes out of ``kickoff``."""
    env = make_env("events", max_model_calls=3)
    crew, calls = build("healthy")
    with pytest.raises(spanbreaker.Tripped) as caught:
        crew.kickoff()
    assert caught.value.detector == "call_budget"
    assert calls.model == 3
    env.assert_nothing_lost()
    blocked = env.marked("spanbreaker.blocked")
    assert len(blocked) == 1 and blocked[0].attributes["openinference.span.kind"] == "LLM"


@pytest.mark.parametrize("mode", MODES)
def test_an_agent_run_without_a_crew_is_stopped_and_the_next_run_is_still_seen(
        make_env: Callable[..., CrewAIEnv], mode: str) -> None:
    """``Agent.kickoff`` (no crew) loops and is stopped the same way. The trip skips the events that close CrewAI's
    event scopes: the adapter puts the scope stack back, or the next run on this thread would start no span in
    event-listener mode and loop unseen."""
    env = make_env(mode)
    crew, calls = build("loop")
    with pytest.raises(spanbreaker.Tripped) as caught:
        crew.agents[0].kickoff("What's the weather?")
    assert caught.value.detector == LOOP_DETECTOR and calls.tools == LOOP_TOOL_CALLS
    env.assert_nothing_lost()
    again, calls = build("loop")
    with pytest.raises(spanbreaker.Tripped):
        again.kickoff()
    assert calls.tools == LOOP_TOOL_CALLS
    assert env.stats.trips == 2
    env.assert_nothing_lost()


def test_a_steer_reaches_the_model_in_wrapper_mode(make_env: Callable[..., CrewAIEnv]) -> None:
    """``response="steer"`` (wrapper mode, the instrumentor's default): the 5th identical search does not run, and
    CrewAI's own tool-error path hands the model the steer's message; a model that changes course finishes normally."""
    from typing import Any

    from .scripted import ScriptedLLM

    env = make_env("wrapper", response="steer")
    crew, calls = build("loop")
    llm: Any = crew.agents[0].llm
    original = ScriptedLLM.call

    def reading(messages: Any, *args: Any, **kwargs: Any) -> Any:
        texts = [str(m.get("content")) for m in messages if isinstance(m, dict)]
        if any("spanbreaker: search called 5 times" in text for text in texts):
            llm.script = lambda turn: "Paris is sunny, as far as I can tell."
        return original(llm, messages, *args, **kwargs)

    object.__setattr__(llm, "call", reading)
    assert "Paris is sunny, as far as I can tell." in str(kickoff(crew))
    assert calls.tools == 4 and env.processor.stats.trips == 0 and env.processor.stats.steered == 1
    env.assert_nothing_lost()


def test_a_steer_in_event_mode_blocks_the_call_and_the_next_repeat_stops_the_crew(
        make_env: Callable[..., CrewAIEnv]) -> None:
    """``response="steer"`` in event-listener mode: the bus would log and swallow the ``Steered`` (the steered call
    ran, its span marked as never run, and CrewAI's own guard ended the run with two spans left open). The adapter
    raises it where the call's start was emitted, as it does a trip: the call does not run. CrewAI then restarts
    the task rather than reading the message, and the next identical call stops the crew; every span is ended."""
    env = make_env("events", response="steer")
    crew, calls = build("loop")
    with pytest.raises(spanbreaker.Tripped) as caught:
        kickoff(crew)
    assert caught.value.detector == LOOP_DETECTOR and calls.tools == LOOP_TOOL_CALLS
    assert env.processor.stats.steered == 1
    env.assert_nothing_lost()
