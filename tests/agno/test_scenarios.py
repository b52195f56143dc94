"""Agno failure modes from issue #4, each proven twice: it trips on the failure, its healthy look-alike is quiet.

Real Agno agents and teams with the real OpenInference instrumentor; the scripted model is the only stub.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agno.agent import Agent
from agno.db.sqlite import SqliteDb
from agno.run.base import RunStatus
from agno.team import Team
from pydantic import BaseModel

import spanbreaker
from spanbreaker.adapters.agno import trip_record

from .conftest import MODES, AgnoEnv, run
from .scripted import calls, scripted, tool_call

pytestmark = pytest.mark.timeout(60)


def tripped_by(output: Any, detector: str) -> None:
    assert output.status is RunStatus.cancelled, (output.status, output.content)
    record = trip_record(output)
    assert record is not None and record.detector == detector, record
    assert f"[{detector}]" in str(output.content)


def quiet(env: AgnoEnv, output: Any) -> None:
    assert output.status is RunStatus.completed, (output.status, output.content)
    assert trip_record(output) is None
    assert env.tripped() == []


# ------------------------------------------------------------------------------- repetition storm
@pytest.mark.parametrize("mode", MODES)
def test_batched_identical_calls_trip(env: AgnoEnv, mode: str) -> None:
    """The model re-issues the same batch after seeing the same answer: each turn is one decision, so the fifth
    turn's batch is vetoed (its first call in sync modes; ``arun`` starts a batch concurrently)."""
    def lookup(sku: str) -> str:
        """Look up a SKU."""
        env.tool_bodies.append(sku)
        return "SKU A-1: out of stock"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("lookup", sku="A-1") for _ in range(8)]} if i < 8
                     else {"content": "none"})
    output = run(Agent(name="Batcher", model=model, tools=[lookup]), mode)
    tripped_by(output, "tool_repeat")
    assert calls(model) == 5, "four turns ran, the fifth turn's repeat was vetoed"
    if mode in ("sync", "stream"):
        assert len(env.tool_bodies) == 32
    else:
        assert len(env.tool_bodies) <= 40
    env.assert_nothing_lost()


@pytest.mark.parametrize("mode", MODES)
def test_identical_calls_in_one_turn_are_one_decision(env: AgnoEnv, mode: str) -> None:
    """Look-alike: one turn asks the same thing eight times (a duplicated batch, a platform hook at a
    hand-off) and the model then moves on. Nothing was asked again after its answer was seen: quiet."""
    def lookup(sku: str) -> str:
        """Look up a SKU."""
        env.tool_bodies.append(sku)
        return "SKU A-1: out of stock"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("lookup", sku="A-1") for _ in range(8)]} if i < 1
                     else {"content": "A-1 is out of stock"})
    output = run(Agent(name="Batcher", model=model, tools=[lookup]), mode)
    quiet(env, output)
    assert len(env.tool_bodies) == 8


@pytest.mark.parametrize("mode", ["sync", "astream"])
def test_varied_queries_with_empty_results_trip(make_env: Any, mode: str) -> None:
    env = make_env(tool_streak_max=6)

    def search(query: str) -> str:
        """Search."""
        env.tool_bodies.append(query)
        return "[]"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("search", query=f"agno breaker variant {i}")]})
    output = run(Agent(name="Searcher", model=model, tools=[search]), mode)
    tripped_by(output, "tool_streak")
    assert len(env.tool_bodies) == 6 and calls(model) == 6  # the seventh model call is vetoed


@pytest.mark.parametrize("mode", MODES)
def test_pagination_is_not_a_loop(env: AgnoEnv, mode: str) -> None:
    def list_issues(page: int) -> str:
        """List issues, one page at a time."""
        env.tool_bodies.append(str(page))
        return json.dumps([{"id": page * 10 + k, "title": f"issue {page * 10 + k}"} for k in range(3)])

    model = scripted(lambda m, i: {"tool_calls": [tool_call("list_issues", page=i + 1)]} if i < 12
                     else {"content": "36 issues"})
    output = run(Agent(name="Pager", model=model, tools=[list_issues]), mode)
    quiet(env, output)
    assert len(env.tool_bodies) == 12


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_allowlisted_polling_is_not_a_loop(make_env: Any, mode: str) -> None:
    env = make_env(allowlist=frozenset({"job_status"}))

    def job_status(job_id: str) -> str:
        """Poll a job."""
        env.tool_bodies.append(job_id)
        return "finished" if len(env.tool_bodies) >= 9 else "running"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("job_status", job_id="j-7")]} if i < 9
                     else {"content": "job finished"})
    output = run(Agent(name="Poller", model=model, tools=[job_status]), mode)
    quiet(env, output)
    assert len(env.tool_bodies) == 9


def test_polling_without_allowlist_trips(env: AgnoEnv) -> None:
    def job_status(job_id: str) -> str:
        """Poll a job."""
        env.tool_bodies.append(job_id)
        return "running"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("job_status", job_id="j-7")]})
    tripped_by(run(Agent(name="Poller", model=model, tools=[job_status]), "sync"), "tool_repeat")


# ------------------------------------------------------------------------------ tool_call_limit
@pytest.mark.parametrize("mode", MODES)
def test_refused_call_loop_trips(env: AgnoEnv, mode: str) -> None:
    """Past ``tool_call_limit`` Agno refuses the calls but keeps calling the model; the refusals are now seen."""
    def search(query: str) -> str:
        """Search."""
        env.tool_bodies.append(query)
        return f"results for {query}"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("search", query=f"attempt {i}")]} if i < 40
                     else {"content": "gave up"})
    output = run(Agent(name="Limited", model=model, tools=[search], tool_call_limit=2), mode)
    tripped_by(output, "error_loop")
    record = trip_record(output)
    assert record is not None and record.evidence["exception_type"] == "ToolCallLimitExceeded"
    assert len(env.tool_bodies) == 2
    assert calls(model) == 6  # 2 real calls, 4 refused ones; the 7th model call never happens (40 without)
    refused = [s for s in env.spans() if (s.attributes or {}).get("spanbreaker.refused")]
    assert len(refused) == 4 and all(s.status.status_code.name == "ERROR" for s in refused)
    env.assert_nothing_lost()


@pytest.mark.parametrize("mode", ["sync", "astream"])
def test_limit_reached_once_then_answer_is_quiet(env: AgnoEnv, mode: str) -> None:
    def search(query: str) -> str:
        """Search."""
        env.tool_bodies.append(query)
        return f"results for {query}"

    model = scripted([{"tool_calls": [tool_call("search", query=f"q{k}") for k in range(3)]},
                      {"content": "answer from two searches"}])
    output = run(Agent(name="Limited", model=model, tools=[search], tool_call_limit=2), mode)
    quiet(env, output)
    assert len(env.tool_bodies) == 2 and calls(model) == 2


# ---------------------------------------------------------------------------- structured output
class Weather(BaseModel):
    city: str
    temp_c: float


VALID = json.dumps({"city": "Paris", "temp_c": 21.5})


def forecaster(steps: list[dict[str, Any]]) -> Agent:
    return Agent(name="Forecaster", model=scripted(steps, default={"content": "sorry, no idea"}),
                 output_schema=Weather)


def redelegating_team(member: Agent, rounds: int = 6) -> Team:
    leader = scripted(lambda m, i: {"tool_calls": [tool_call(
        "delegate_task_to_member", member_id="forecaster", task=f"weather in Paris, attempt {i + 1}")]}
        if i < rounds else {"content": "done"})
    return Team(name="Desk", model=leader, members=[member])


@pytest.mark.parametrize("mode", MODES)
def test_member_structured_output_failing_again_and_again_trips(env: AgnoEnv, mode: str) -> None:
    member = forecaster([])
    team = redelegating_team(member)
    output = run(team, mode)
    tripped_by(output, "validation_failures")
    assert calls(member.model) == 3  # type: ignore[arg-type]
    flagged = [s for s in env.spans() if (s.attributes or {}).get("spanbreaker.validation_failed")]
    assert len(flagged) == 3
    env.assert_nothing_lost()


@pytest.mark.parametrize("mode", MODES)
def test_one_invalid_output_then_valid_is_quiet(env: AgnoEnv, mode: str) -> None:
    member = forecaster([{"content": "it is warm"}, {"content": VALID}])
    leader = scripted([
        {"tool_calls": [tool_call("delegate_task_to_member", member_id="forecaster", task="weather in Paris")]},
        {"tool_calls": [tool_call("delegate_task_to_member", member_id="forecaster", task="weather, as JSON")]},
        {"content": "21.5 C in Paris"},
    ])
    output = run(Team(name="Desk", model=leader, members=[member]), mode)
    quiet(env, output)
    assert [s.name for s in env.spans() if (s.attributes or {}).get("spanbreaker.validation_failed")] != []


def test_valid_output_is_not_flagged(env: AgnoEnv) -> None:
    output = run(forecaster([{"content": VALID}]), "sync")
    assert isinstance(output.content, Weather)
    quiet(env, output)
    assert not any((s.attributes or {}).get("spanbreaker.validation_failed") for s in env.spans())


def test_failures_across_runs_of_one_session_are_recorded(env: AgnoEnv) -> None:
    """Each run is its own trace; the session's third failed run carries the trip record."""
    agent = forecaster([])
    outputs = [agent.run("weather in Paris", session_id="s-weather") for _ in range(3)]
    assert trip_record(outputs[1]) is None
    record = trip_record(outputs[2])
    assert record is not None and record.detector == "validation_failures"


def test_a_long_session_whose_output_fails_now_and_then_is_never_stopped(env: AgnoEnv) -> None:
    """Two failed runs, a valid one, and again, nine runs of one session: failures never three in a row."""
    agent = forecaster([{"content": "it is warm"}, {"content": "no idea"}, {"content": VALID}] * 3)
    outputs = [agent.run("weather in Paris", session_id="s-chat") for _ in range(9)]
    assert [isinstance(output.content, Weather) for output in outputs] == [False, False, True] * 3
    assert [trip_record(output) for output in outputs] == [None] * 9
    assert env.tripped() == []
    env.assert_nothing_lost()


@pytest.mark.parametrize("mode", ["sync", "astream"])
def test_retry_loop_in_one_trace_is_refused_before_the_model(env: AgnoEnv, mode: str) -> None:
    """An application retrying inside its own span: the run after the third failure is vetoed at its start.

    A run refused before it starts has no RunOutput to return: it raises the trip (``except Tripped``).
    """
    agent = forecaster([])
    tracer = env.provider.get_tracer("app")
    outcomes: list[str] = []
    with tracer.start_as_current_span("retry loop"), pytest.raises(spanbreaker.Tripped) as caught:
        for _ in range(6):
            outcomes.append(run(agent, mode, "weather in Paris").status.value)
    assert outcomes == ["COMPLETED"] * 3
    assert caught.value.detector == "validation_failures" and caught.value.blocked
    assert calls(agent.model) == 3  # type: ignore[arg-type]
    env.assert_nothing_lost()


# ------------------------------------------------------------------------------ team delegation
def parrot(name: str, answer: str) -> Agent:
    return Agent(name=name, model=scripted(lambda m, i: {"content": answer}))


@pytest.mark.parametrize("mode", MODES)
def test_back_delegation_cycle_trips(env: AgnoEnv, mode: str) -> None:
    member = parrot("Researcher", "I need the lead to clarify the task first.")
    leader = scripted(lambda m, i: {"tool_calls": [tool_call(
        "delegate_task_to_member", member_id="researcher", task="find the root cause")]})
    output = run(Team(name="Lead", model=leader, members=[member]), mode)
    tripped_by(output, "delegation_repeat")
    assert calls(member.model) == 3  # type: ignore[arg-type]
    assert calls(leader) == 4  # the fourth identical delegation is vetoed before the member runs
    env.assert_nothing_lost()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_nested_team_back_delegation_trips(env: AgnoEnv, mode: str) -> None:
    member = parrot("Researcher", "Need clarification.")
    inner_leader = scripted(lambda m, i: {"tool_calls": [tool_call(
        "delegate_task_to_member", member_id="researcher", task="find the root cause")]})
    inner = Team(name="Research Team", model=inner_leader, members=[member])
    outer_leader = scripted(lambda m, i: {"tool_calls": [tool_call(
        "delegate_task_to_member", member_id="research-team", task="investigate")]} if i < 3
        else {"content": "done"})
    output = run(Team(name="Board", model=outer_leader, members=[inner]), mode)
    tripped_by(output, "delegation_repeat")
    assert calls(member.model) == 3 and calls(outer_leader) == 1  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", MODES)
def test_normal_delegation_is_quiet(env: AgnoEnv, mode: str) -> None:
    analyst = parrot("Analyst", "Revenue grew 12%.")
    writer = parrot("Writer", "Draft: revenue grew 12%.")
    leader = scripted([
        {"tool_calls": [tool_call("delegate_task_to_member", member_id="analyst", task="analyse Q3")]},
        {"tool_calls": [tool_call("delegate_task_to_member", member_id="writer", task="write the summary")]},
        {"content": "Summary: revenue grew 12%."},
    ])
    output = run(Team(name="Lead", model=leader, members=[analyst, writer]), mode)
    quiet(env, output)
    env.assert_nothing_lost()


# ------------------------------------------------------------------------------ session history
def chatty_agent(db_file: Path, num_history_runs: int) -> Agent:
    return Agent(name="Chatty", model=scripted(lambda m, i: {"content": f"answer number {i} " + "x" * 40}),
                 db=SqliteDb(db_file=str(db_file)), session_id="long-session", add_history_to_context=True,
                 num_history_runs=num_history_runs)


@pytest.mark.parametrize("mode", MODES)
def test_session_history_bloat_trips_before_the_model_is_called(make_env: Any, tmp_path: Path, mode: str) -> None:
    env = make_env(session_history_messages=6)
    agent = chatty_agent(tmp_path / "sessions.db", num_history_runs=50)
    for n in range(4):  # runs 1-4 carry 0, 2, 4, 6 history messages
        assert run(agent, mode, f"question {n}").status is RunStatus.completed
    before = calls(agent.model)  # type: ignore[arg-type]
    output = run(agent, mode, "question 4")  # 8 history messages > 6
    tripped_by(output, "session_bloat")
    assert calls(agent.model) == before  # type: ignore[arg-type]
    record = trip_record(output)
    assert record is not None and record.evidence["history_messages"] == 8
    env.assert_nothing_lost()


@pytest.mark.parametrize("mode", ["sync", "astream"])
def test_bounded_session_history_is_quiet(make_env: Any, tmp_path: Path, mode: str) -> None:
    env = make_env(session_history_messages=6)
    agent = chatty_agent(tmp_path / "sessions.db", num_history_runs=2)
    outputs = [run(agent, mode, f"question {n}") for n in range(8)]
    assert all(o.status is RunStatus.completed for o in outputs)
    assert env.tripped() == []


# -------------------------------------------------------------------------------------- budgets
def spending_team(usage: tuple[Any, ...], rounds: int = 6) -> tuple[Team, Any, Any]:
    member_model = scripted(lambda m, i: {"content": f"finding {i}", "usage": usage})
    member = Agent(name="Analyst", model=member_model)
    leader = scripted(lambda m, i: {"tool_calls": [tool_call(
        "delegate_task_to_member", member_id="analyst", task=f"analyse segment {i}")], "usage": usage}
        if i < rounds else {"content": "report", "usage": usage})
    return Team(name="Lead", model=leader, members=[member]), leader, member_model


@pytest.mark.parametrize("mode", MODES)
def test_token_budget_sums_leader_and_members(make_env: Any, mode: str) -> None:
    env = make_env(max_tokens=5000)
    team, leader, member = spending_team((800, 200))
    output = run(team, mode)
    tripped_by(output, "token_budget")
    record = trip_record(output)
    assert record is not None and record.evidence["tokens"] >= 5000
    assert calls(leader) == 3 and calls(member) == 2  # 5 calls x 1000 tokens, leader and member together
    env.assert_nothing_lost()


def test_call_budget_per_trace(make_env: Any) -> None:
    make_env(max_model_calls=4)
    team, leader, member = spending_team((10, 5))
    output = run(team, "sync")
    tripped_by(output, "call_budget")
    assert calls(leader) + calls(member) == 4


@pytest.mark.parametrize("mode", ["sync", "astream"])
def test_cost_budget_per_trace(make_env: Any, mode: str) -> None:
    make_env(max_cost_usd=0.05)
    team, leader, member = spending_team((100, 50, 0.02))
    output = run(team, mode)
    tripped_by(output, "cost_budget")
    assert calls(leader) + calls(member) == 3


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_within_budget_is_quiet(make_env: Any, mode: str) -> None:
    env = make_env(max_tokens=50_000, max_model_calls=40, max_cost_usd=1.0)
    team, _, _ = spending_team((800, 200, 0.01), rounds=4)
    quiet(env, run(team, mode))
