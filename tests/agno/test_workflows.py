"""Agno Workflows, ``TeamMode.tasks`` and ``continue_run``: a loop inside each is stopped, its healthy twin is not.

Real Agno workflows, teams and human-in-the-loop runs with the real OpenInference instrumentor; the scripted
model is the only stub. For each: the run ends CANCELLED with the trip reason (Agno's own clean stop), nothing
runs after the trip (no later workflow step, no model call), every started span is exported once, and the span
where it tripped, its agent and the root carry the trip marks with status ERROR.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from agno.agent import Agent
from agno.run.base import RunStatus
from agno.team import Team
from agno.team.mode import TeamMode
from agno.tools import tool
from agno.workflow import Loop, Parallel, Step, Workflow
from opentelemetry import trace

import spanbreaker
from spanbreaker.adapters.agno import trip_record

from .conftest import MODES, RUN_TIMEOUT_S, AgnoEnv, run
from .scripted import calls, scripted, tool_call

pytestmark = pytest.mark.timeout(60)


def fetcher(env: AgnoEnv, name: str = "Researcher", vary: bool = False, answer_every: int = 0) -> Agent:
    """An agent whose model asks for the same fetch; ``vary`` makes each result different, ``answer_every``
    makes it answer after that many fetches (then start again on its next run)."""
    def fetch(url: str) -> str:
        """Fetch a URL."""
        env.tool_bodies.append(url)
        return f"page #{len(env.tool_bodies)}" if vary else "403 Forbidden"

    def step(messages: list[Any], i: int) -> dict[str, Any]:
        if answer_every and i % (answer_every + 1) == answer_every:
            return {"content": "blocked by 403"}
        return {"tool_calls": [tool_call("fetch", url="https://x.test/a")]} if i < 8 else {"content": "gave up"}

    return Agent(name=name, model=scripted(step), tools=[fetch])


def run_workflow(workflow: Workflow, mode: str) -> Any:
    """Run a workflow in one of the four modes; return its WorkflowRunOutput (streams end with one)."""
    if mode == "sync":
        return workflow.run("go")
    if mode == "async":
        return asyncio.run(asyncio.wait_for(workflow.arun("go"), RUN_TIMEOUT_S))
    if mode == "stream":
        events = list(workflow.run("go", stream=True))
    else:
        async def consume() -> list[Any]:
            return [e async for e in workflow.arun("go", stream=True)]

        events = asyncio.run(asyncio.wait_for(consume(), RUN_TIMEOUT_S))
    output = getattr(events[-1], "run_output", None)
    assert output is not None, [type(e).__name__ for e in events]
    return output


def assert_marked(env: AgnoEnv, detector: str, agent: str) -> None:
    """The blocked call, its agent and the root span carry the trip; every started span was exported once."""
    env.assert_nothing_lost()
    tripped = env.tripped()
    assert all((s.attributes or {})["spanbreaker.detector"] == detector for s in tripped)
    assert any((s.attributes or {}).get("spanbreaker.blocked") for s in tripped), "the vetoed call is marked"
    assert any(s.name.startswith(f"{agent}.") for s in tripped), "its agent is marked"
    roots = [s for s in env.spans() if s.parent is None]
    assert roots and all((s.attributes or {}).get("spanbreaker.tripped") for s in roots)
    assert all(s.status.status_code.name == "ERROR" for s in roots), "the trip's ERROR survives the wrapper"
    assert not trace.get_current_span().get_span_context().is_valid, "the run leaked its context"


def assert_cancelled_by(output: Any, detector: str, concurrent_model_calls: int = 0) -> None:
    """The run ended cancelled by ``detector``'s trip, and no model call came after it but those of branches
    running beside the tripped one (``Parallel``: a branch scheduled late under load may ask after the trip, and
    is then blocked)."""
    assert output.status is RunStatus.cancelled, (output.status, output.content)
    assert str(output.content).startswith(f"spanbreaker tripped [{detector}]")
    record = trip_record(output)
    assert record is not None and record.detector == detector
    assert record.model_calls_after <= concurrent_model_calls


# ----------------------------------------------------------------------------------------- Workflow
@pytest.mark.parametrize("mode", MODES)
def test_looping_agent_step_stops_the_workflow(env: AgnoEnv, mode: str) -> None:
    """The agent step is cancelled by the trip; Agno would call that a failed step and run the next one. The
    workflow ends CANCELLED at that step instead: the function step and the writer after it never run."""
    researcher = fetcher(env)
    writer = Agent(name="Writer", model=scripted([{"content": "report"}]))
    after: list[str] = []

    def publish(step_input: Any) -> str:
        after.append("publish")
        return "published"

    workflow = Workflow(name="Pipeline", steps=[Step(name="research", agent=researcher),
                                                Step(name="publish", executor=publish),
                                                Step(name="write", agent=writer)])
    output = run_workflow(workflow, mode)
    assert_cancelled_by(output, "tool_repeat")
    assert len(env.tool_bodies) == 4 and calls(researcher.model) == 5  # type: ignore[arg-type]
    assert after == [] and calls(writer.model) == 0  # type: ignore[arg-type]
    assert_marked(env, "tool_repeat", "Researcher")
    step_span = next(s for s in env.spans() if s.name.startswith("research."))
    assert step_span.status.status_code.name == "ERROR" and (step_span.attributes or {}).get("spanbreaker.tripped")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_function_step_running_a_looping_agent_stops_the_workflow(env: AgnoEnv, mode: str) -> None:
    """A function step that runs the agent itself hands Agno only the agent's content, no status. The breaker is
    open in the step's trace, so the step raises the trip at its edge all the same; the next function step never
    runs (it makes no span the latched breaker could block)."""
    researcher = fetcher(env)
    after: list[str] = []

    def research(step_input: Any) -> str:
        output = researcher.run("fetch the page")
        return str(output.content)

    async def aresearch(step_input: Any) -> str:
        output = await researcher.arun("fetch the page")
        return str(output.content)

    def publish(step_input: Any) -> str:
        after.append("publish")
        return "published"

    workflow = Workflow(name="Pipeline", steps=[Step(name="research", executor=research if mode == "sync"
                                                     else aresearch), Step(name="publish", executor=publish)])
    output = run_workflow(workflow, mode)
    assert_cancelled_by(output, "tool_repeat")
    assert len(env.tool_bodies) == 4 and after == []
    assert_marked(env, "tool_repeat", "Researcher")


@pytest.mark.parametrize("mode", MODES)
def test_healthy_workflow_runs_every_step(env: AgnoEnv, mode: str) -> None:
    researcher = fetcher(env, vary=True)
    writer = Agent(name="Writer", model=scripted([{"content": "report"}]))
    workflow = Workflow(name="Pipeline", steps=[Step(name="research", agent=researcher),
                                                Step(name="write", agent=writer)])
    output = run_workflow(workflow, mode)
    assert output.status is RunStatus.completed and output.content == "report"
    assert len(env.tool_bodies) == 8 and calls(writer.model) == 1  # type: ignore[arg-type]
    assert trip_record(output) is None and env.tripped() == []
    env.assert_nothing_lost()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_looping_team_step_stops_the_workflow(env: AgnoEnv, mode: str) -> None:
    """A team step: the member loops across the leader's re-delegations; the workflow stops with the team."""
    member = fetcher(env, name="Worker", answer_every=2)
    leader = scripted(lambda m, i: {"tool_calls": [tool_call(
        "delegate_task_to_member", member_id="worker", task="fetch the page")]} if i < 8 else {"content": "done"})
    writer = Agent(name="Writer", model=scripted([{"content": "report"}]))
    workflow = Workflow(name="Pipeline", steps=[Step(name="research", team=Team(
        name="Crew", model=leader, members=[member])), Step(name="write", agent=writer)])
    output = run_workflow(workflow, mode)
    assert_cancelled_by(output, "tool_repeat")
    assert len(env.tool_bodies) == 4 and calls(leader) == 3 and calls(writer.model) == 0  # type: ignore[arg-type]
    assert_marked(env, "tool_repeat", "Worker")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_looping_parallel_branch_stops_the_workflow(env: AgnoEnv, mode: str) -> None:
    """``Parallel`` runs its steps in worker threads (sync) or tasks (async); the trip in one branch still ends
    the workflow, and the step after the parallel block never runs."""
    looping, steady = fetcher(env, name="Looper"), Agent(name="Steady", model=scripted([{"content": "fine"}]))
    writer = Agent(name="Writer", model=scripted([{"content": "report"}]))
    workflow = Workflow(name="Fanout", steps=[
        Parallel(Step(name="loop", agent=looping), Step(name="steady", agent=steady), name="both"),
        Step(name="write", agent=writer)])
    output = run_workflow(workflow, mode)
    assert_cancelled_by(output, "tool_repeat", concurrent_model_calls=1)  # Steady's one call
    assert len(env.tool_bodies) == 4 and calls(writer.model) == 0  # type: ignore[arg-type]
    assert_marked(env, "tool_repeat", "Looper")


@pytest.mark.parametrize("mode", MODES)
def test_looping_agent_in_a_workflow_loop_stops_it(env: AgnoEnv, mode: str) -> None:
    """A ``Loop`` re-runs its step (here up to 10 times): each iteration a fresh run of the checker fetches the
    same page and gets the same 403. The fifth identical fetch, in the fifth iteration, is vetoed; the loop and
    the workflow end there and the writer after the loop never runs."""
    def fetch(url: str) -> str:
        """Fetch a URL."""
        env.tool_bodies.append(url)
        return "403 Forbidden"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("fetch", url="https://x.test/a")]} if i % 2 == 0
                     else {"content": "still blocked"})
    writer = Agent(name="Writer", model=scripted([{"content": "report"}]))
    workflow = Workflow(name="Poll", steps=[
        Loop(name="retry", steps=[Step(name="check", agent=Agent(name="Checker", model=model, tools=[fetch]))],
             max_iterations=10),
        Step(name="write", agent=writer)])
    output = run_workflow(workflow, mode)
    assert_cancelled_by(output, "tool_repeat")
    assert len(env.tool_bodies) == 4 and calls(model) == 9 and calls(writer.model) == 0  # type: ignore[arg-type]
    assert_marked(env, "tool_repeat", "Checker")


def test_observe_mode_workflow_runs_on(make_env: Any) -> None:
    env = make_env(mode="observe")
    researcher = fetcher(env)
    writer = Agent(name="Writer", model=scripted([{"content": "report"}]))
    output = Workflow(name="Pipeline", steps=[Step(name="research", agent=researcher),
                                              Step(name="write", agent=writer)]).run("go")
    assert output.status is RunStatus.completed and output.content == "report"
    record = trip_record(output)
    assert record is not None and record.detector == "tool_repeat"
    assert len(env.tool_bodies) == 8 and env.blocked() == []
    root = next(s for s in env.spans() if s.parent is None)
    assert root.status.status_code.name == "OK", "in observe mode the run's own status wins"
    env.assert_nothing_lost()


# -------------------------------------------------------------------------------------- TeamMode.tasks
def created_task_id(messages: list[Any]) -> str:
    for message in reversed(messages):
        found = re.search(r"Task created: \[(\w+)\]", str(getattr(message, "content", "")))
        if found:
            return found.group(1)
    return "missing"


def task_team(member: Agent) -> tuple[Team, Any]:
    """A ``mode=tasks`` team: the leader creates one task, has the worker execute it, then marks all done."""
    def leader(messages: list[Any], i: int) -> dict[str, Any]:
        if i == 0:
            return {"tool_calls": [tool_call("create_task", title="Fetch the page", description="fetch it",
                                             assignee="worker")]}
        if i == 1:
            return {"tool_calls": [tool_call("execute_task", task_id=created_task_id(messages), member_id="worker")]}
        if i == 2:
            return {"tool_calls": [tool_call("mark_all_complete", summary="fetched")]}
        return {"content": "all tasks done"}

    model = scripted(leader)
    return Team(name="Crew", model=model, members=[member], mode=TeamMode.tasks), model


def test_team_has_a_tasks_mode() -> None:
    assert TeamMode.tasks.value == "tasks"


@pytest.mark.parametrize("mode", MODES)
def test_looping_task_member_stops_the_team(env: AgnoEnv, mode: str) -> None:
    team, leader = task_team(fetcher(env, name="Worker"))
    output = run(team, mode)
    assert_cancelled_by(output, "tool_repeat")
    assert len(env.tool_bodies) == 4 and calls(leader) == 2, "no leader call after the member's trip"
    assert_marked(env, "tool_repeat", "Worker")


@pytest.mark.parametrize("mode", MODES)
def test_healthy_task_team_completes(env: AgnoEnv, mode: str) -> None:
    team, leader = task_team(fetcher(env, name="Worker", vary=True))
    output = run(team, mode)
    assert output.status is RunStatus.completed, (output.status, output.content)
    assert calls(leader) == 4 and len(env.tool_bodies) == 8
    assert trip_record(output) is None and env.tripped() == []
    env.assert_nothing_lost()


# ---------------------------------------------------------------------------------------- continue_run
def confirming_agent(env: AgnoEnv, after_confirm: str = "loop") -> Agent:
    """Its first call needs confirmation (``requires_confirmation``): the run pauses. After the human says yes,
    the model either fetches the same page over and over (``loop``), or different pages (``vary``)."""
    @tool(requires_confirmation=True)
    def deploy(target: str) -> str:
        """Deploy to a target."""
        env.tool_bodies.append(f"deploy {target}")
        return "deployed"

    def fetch(url: str) -> str:
        """Fetch a URL."""
        env.tool_bodies.append(url)
        return "403 Forbidden" if after_confirm == "loop" else f"page #{len(env.tool_bodies)}"

    def step(messages: list[Any], i: int) -> dict[str, Any]:
        if i == 0:
            return {"tool_calls": [tool_call("deploy", target="prod")]}
        return {"tool_calls": [tool_call("fetch", url="https://x.test/status")]} if i < 9 else {"content": "live"}

    return Agent(name="Ops", model=scripted(step), tools=[deploy, fetch])


def resume(agent: Agent, paused: Any, mode: str) -> Any:
    assert paused.status is RunStatus.paused and paused.active_requirements
    for requirement in paused.active_requirements:
        requirement.confirm()
    if mode == "sync":
        return agent.continue_run(run_response=paused, requirements=paused.requirements)
    if mode == "stream":
        events = list(agent.continue_run(run_response=paused, requirements=paused.requirements, stream=True,
                                         yield_run_output=True))
        return next(e for e in reversed(events) if type(e).__name__ == "RunOutput")
    return asyncio.run(asyncio.wait_for(
        agent.acontinue_run(run_response=paused, requirements=paused.requirements), RUN_TIMEOUT_S))


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_loop_after_confirmation_stops_the_resumed_run(env: AgnoEnv, mode: str) -> None:
    agent = confirming_agent(env)
    paused = run(agent, mode)
    assert env.tripped() == [], "pausing for a human is not a trip"
    output = resume(agent, paused, mode)
    assert_cancelled_by(output, "tool_repeat")
    assert env.tool_bodies[0] == "deploy prod" and len(env.tool_bodies) == 5
    assert calls(agent.model) == 6  # type: ignore[arg-type]
    env.assert_nothing_lost()
    resumed = [s for s in env.spans() if s.name.startswith("Ops.") and "continue_run" in s.name]
    assert len(resumed) == 1 and (resumed[0].attributes or {}).get("spanbreaker.tripped")
    assert resumed[0].status.status_code.name == "ERROR"
    assert any((s.attributes or {}).get("spanbreaker.blocked") for s in env.tripped())


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_healthy_resumed_run_completes(env: AgnoEnv, mode: str) -> None:
    agent = confirming_agent(env, after_confirm="vary")
    output = resume(agent, run(agent, mode), mode)
    assert output.status is RunStatus.completed and output.content == "live"
    assert trip_record(output) is None and env.tripped() == []
    env.assert_nothing_lost()


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_confirmation_loop_across_resumptions_in_one_trace_trips(env: AgnoEnv, mode: str) -> None:
    """Each ``continue_run`` is a trace of its own unless the application holds a span around the session. With
    one, a model that asks the human to confirm the same deploy again and again, getting the same answer each
    time, is a repeat across runs: the fifth identical deploy is vetoed and the resumed run ends CANCELLED. (Sync
    Agno runs confirmed tools outside the run's own error handling; the adapter ends that run CANCELLED too.)"""
    @tool(requires_confirmation=True)
    def deploy(target: str) -> str:
        """Deploy to a target."""
        env.tool_bodies.append(target)
        return "deploy failed: quota"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("deploy", target="prod")]})
    agent = Agent(name="Ops", model=model, tools=[deploy])
    tracer = env.provider.get_tracer("app")
    with tracer.start_as_current_span("session"):
        output = run(agent, mode, "ship it")
        rounds = 0
        while output.status is RunStatus.paused and rounds < 10:
            output = resume(agent, output, mode)
            rounds += 1
    assert_cancelled_by(output, "tool_repeat")
    assert len(env.tool_bodies) == 4 and rounds == 5
    env.assert_nothing_lost()


def test_team_confirmation_loop_raises_the_trip_from_continue_run(env: AgnoEnv) -> None:
    """A team's confirmed tools run in ``continue_run``'s dispatch, before the team's run (and its error
    handling) starts: there is no run to cancel yet, so the trip comes out of ``team.continue_run`` as
    ``AgnoTripped``, which ``except spanbreaker.Tripped`` catches, with every span exported."""
    from agno.team import Team

    @tool(requires_confirmation=True)
    def deploy(target: str) -> str:
        """Deploy to a target."""
        env.tool_bodies.append(target)
        return "deploy failed: quota"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("deploy", target="prod")]})
    team = Team(name="Ops", model=model, members=[Agent(name="Member", model=scripted([{"content": "ok"}]))],
                tools=[deploy])
    with env.provider.get_tracer("app").start_as_current_span("session"), \
            pytest.raises(spanbreaker.Tripped) as caught:
        output = team.run("ship it")
        for _ in range(10):
            for requirement in output.active_requirements:
                requirement.confirm()
            output = team.continue_run(run_response=output, requirements=output.requirements)
    assert caught.value.detector == "tool_repeat" and len(env.tool_bodies) == 4
    env.assert_nothing_lost()
    session = next(s for s in env.spans() if s.name == "session")
    assert (session.attributes or {}).get("spanbreaker.tripped")
