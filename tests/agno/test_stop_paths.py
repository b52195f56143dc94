"""A trip stops an Agno Agent, a Team and a nested Team in all four run modes, cleanly.

For each mode the run must: end CANCELLED with the trip reason, make no model or tool call after the trip,
lead from its RunOutput to the breaker's record, leave no OTel context behind, not hang (async modes are
bounded by ``asyncio.wait_for``; the module has a pytest timeout), and export every started span once with
the trip marks. The healthy twin of each run (the tool's result changes) completes untouched.
"""

from __future__ import annotations

from typing import Any

import pytest
from agno.agent import Agent
from agno.exceptions import RunCancelledException
from agno.run.base import RunStatus
from agno.team import Team
from opentelemetry import trace

import spanbreaker
from spanbreaker.adapters.agno import ADAPTER, trace_id_of, trip_record

from .conftest import MODES, AgnoEnv, run
from .scripted import calls, scripted, tool_call

pytestmark = pytest.mark.timeout(60)


def looping_agent(env: AgnoEnv, name: str = "Looper", result: str = "403 Forbidden", vary: bool = False) -> Agent:
    """An agent whose model asks for the same fetch forever; ``vary`` makes each result different."""
    def fetch(url: str) -> str:
        """Fetch a URL."""
        env.tool_bodies.append(url)
        return f"{result} #{len(env.tool_bodies)}" if vary else result

    model = scripted(lambda messages, i: {"tool_calls": [tool_call("fetch", url="https://x.test/a")]}
                     if i < 8 else {"content": "gave up"})
    return Agent(name=name, model=model, tools=[fetch])


def assert_stopped(env: AgnoEnv, output: Any, detector: str) -> None:
    assert output.status is RunStatus.cancelled
    assert isinstance(output.content, str) and output.content.startswith("spanbreaker tripped")
    assert f"[{detector}]" in output.content
    record = trip_record(output)
    assert record is not None and record.detector == detector
    assert record.reason and record.evidence
    assert trace_id_of(output) == record.trace_id
    assert env.processor.trip_record(record.trace_id) is record
    assert not trace.get_current_span().get_span_context().is_valid, "the run leaked its context"
    env.assert_nothing_lost()
    blocked = env.blocked()
    assert blocked, "the vetoed call is exported, marked blocked"
    assert all(s.attributes and s.attributes["spanbreaker.detector"] == detector for s in env.tripped())
    roots = [s for s in env.spans() if s.parent is None]
    assert roots and all((s.attributes or {}).get("spanbreaker.tripped") for s in roots)
    assert all(s.status.status_code.name == "ERROR" for s in roots), "the trip's ERROR survives the run wrapper"


def test_trip_exception_is_both_a_cancel_and_a_trip(env: AgnoEnv) -> None:
    cls = ADAPTER.trip_exception
    assert cls is not None and issubclass(cls, RunCancelledException) and issubclass(cls, spanbreaker.Tripped)
    err = cls("tool_repeat", "why", "0" * 32, {"n": 1})
    assert err.detector == "tool_repeat" and err.type == "run_cancelled_error"


@pytest.mark.parametrize("mode", MODES)
def test_agent_stops_before_next_call(env: AgnoEnv, mode: str) -> None:
    agent = looping_agent(env)
    output = run(agent, mode)
    assert_stopped(env, output, "tool_repeat")
    # tool_repeat_max=4: four identical fetches ran, the fifth was vetoed, the model was not called again.
    assert len(env.tool_bodies) == 4
    assert calls(agent.model) == 5  # type: ignore[arg-type]
    record = trip_record(output)
    assert record is not None and record.model_calls_after == 0 and record.blocked_calls == 1


@pytest.mark.parametrize("mode", MODES)
def test_agent_healthy_twin_completes(env: AgnoEnv, mode: str) -> None:
    agent = looping_agent(env, vary=True)
    output = run(agent, mode)
    assert output.status is RunStatus.completed and output.content == "gave up"
    assert trip_record(output) is None and env.tripped() == []
    env.assert_nothing_lost()


def looping_team(env: AgnoEnv, nested: bool = False) -> tuple[Team, list[Any]]:
    member = looping_agent(env, name="Worker")
    # The member answers after three calls; the leader keeps re-delegating.
    member.model = scripted(lambda m, i: {"tool_calls": [tool_call("fetch", url="https://x.test/a")]}
                            if i % 3 != 2 else {"content": "blocked by 403"})
    delegate_forever = scripted(lambda m, i: {"tool_calls": [tool_call(
        "delegate_task_to_member", member_id="worker", task="fetch the page")]} if i < 8 else {"content": "done"})
    models: list[Any] = [member.model, delegate_forever]
    team = Team(name="Crew", model=delegate_forever, members=[member])
    if nested:
        outer_model = scripted(lambda m, i: {"tool_calls": [tool_call(
            "delegate_task_to_member", member_id="crew", task="get the page")]} if i < 8 else {"content": "done"})
        models.append(outer_model)
        team = Team(name="Board", model=outer_model, members=[team])
    return team, models


@pytest.mark.parametrize("nested", [False, True], ids=["team", "nested-team"])
@pytest.mark.parametrize("mode", MODES)
def test_member_trip_stops_the_whole_team(env: AgnoEnv, mode: str, nested: bool) -> None:
    team, models = looping_team(env, nested)
    output = run(team, mode)
    assert_stopped(env, output, "tool_repeat")
    assert len(env.tool_bodies) == 4
    member_model, leader_model = models[0], models[1]
    # Member runs: fetch, fetch, answer | fetch, fetch, answer | fetch -> the fifth identical fetch is vetoed
    # (the member's history spans its runs in the trace); nobody is called after it.
    assert calls(member_model) == 7
    assert calls(leader_model) == 3
    if nested:
        assert calls(models[2]) == 1
    record = trip_record(output)
    assert record is not None and record.agent == "Worker" and record.model_calls_after == 0


@pytest.mark.parametrize("mode", MODES)
def test_standalone_run_after_team_is_a_new_trace(env: AgnoEnv, mode: str) -> None:
    """B1: the team's ended span must not stay current, or the next run joins (and inherits) its breaker."""
    team, _ = looping_team(env)
    team_output = run(team, mode)
    assert team_output.status is RunStatus.cancelled
    env.exporter.clear()
    agent = Agent(name="After", model=scripted([{"content": "fresh"}]))
    output = run(agent, mode)
    assert output.status is RunStatus.completed and output.content == "fresh"
    after = [s for s in env.spans() if s.name.startswith("After.")]
    assert after and after[0].parent is None
    assert trace_id_of(output) != trace_id_of(team_output)


@pytest.mark.parametrize("mode", MODES)
def test_broadcast_team_stops_every_member(env: AgnoEnv, mode: str) -> None:
    """``delegate_to_all_members``: members run side by side (concurrently under ``arun``); one trip stops all."""
    members = [looping_agent(env, name=f"Worker {k}") for k in range(2)]
    for member in members:
        member.model = scripted(lambda m, i: {"tool_calls": [tool_call("fetch", url="https://x.test/a")]}
                                if i % 3 != 2 else {"content": "blocked by 403"})
    leader = scripted(lambda m, i: {"tool_calls": [tool_call("delegate_task_to_members", task="fetch the page")]}
                      if i < 8 else {"content": "done"})
    output = run(Team(name="Broadcast", model=leader, members=members, delegate_to_all_members=True), mode)
    assert_stopped(env, output, "tool_repeat")
    assert calls(leader) == 3


@pytest.mark.parametrize("mode", ["sync", "astream"])
def test_observe_mode_reports_without_stopping(make_env: Any, mode: str) -> None:
    env = make_env(mode="observe")
    agent = looping_agent(env)
    output = run(agent, mode)
    assert output.status is RunStatus.completed and output.content == "gave up"
    assert len(env.tool_bodies) == 8  # nothing vetoed
    record = trip_record(output)
    assert record is not None and record.detector == "tool_repeat"
    assert env.blocked() == []
    root = next(s for s in env.spans() if s.parent is None)
    assert root.status.status_code.name == "OK" and (root.attributes or {}).get("spanbreaker.mode") == "observe"
    env.assert_nothing_lost()
