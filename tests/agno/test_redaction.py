"""Values an instrumentor redacts: never identical as text, known to the breaker in process.

OpenInference's ``TraceConfig`` (``hide_inputs`` / ``hide_outputs``, also from ``OPENINFERENCE_HIDE_INPUTS`` /
``OPENINFERENCE_HIDE_OUTPUTS``) writes ``__REDACTED__`` in place of a call's arguments and result. Read as text,
every redacted call would look like every other: six different fetches with six different pages would trip as a
repeat. Read as unknown, no loop would be caught. The breaker is shown the values in process instead
(``adapters/openinference.py``); the spans stay as the instrumentor masked them. Real Agno agent, the real
instrumentor under those settings; the scripted model is the only stub.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from agno.agent import Agent
from agno.run.base import RunStatus
from openinference.instrumentation.config import REDACTED_VALUE

from spanbreaker.conventions import openinference

from .conftest import AgnoEnv
from .scripted import calls, scripted, tool_call

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def hidden_env(monkeypatch: pytest.MonkeyPatch, make_env: Callable[..., AgnoEnv]) -> AgnoEnv:
    monkeypatch.setenv("OPENINFERENCE_HIDE_INPUTS", "true")
    monkeypatch.setenv("OPENINFERENCE_HIDE_OUTPUTS", "true")
    return make_env()  # the instrumentor's TraceConfig reads the variables when it is instrumented


def test_our_marker_is_the_instrumentors() -> None:
    assert openinference.REDACTED == REDACTED_VALUE


def test_distinct_redacted_calls_are_not_a_repeat(hidden_env: AgnoEnv) -> None:
    env = hidden_env

    def fetch(url: str) -> str:
        """Fetch a URL."""
        env.tool_bodies.append(url)
        return f"page for {url}"

    def step(messages: list[Any], i: int) -> dict[str, Any]:
        return {"tool_calls": [tool_call("fetch", url=f"https://x.test/{i}")]} if i < 8 else {"content": "read 8"}

    output = Agent(name="Reader", model=scripted(step), tools=[fetch]).run("go")
    assert output.status is RunStatus.completed and output.content == "read 8"
    tools = [s for s in env.spans() if (s.attributes or {}).get("openinference.span.kind") == "TOOL"]
    assert len(tools) == 8
    assert all((s.attributes or {}).get("input.value") == REDACTED_VALUE for s in tools), "inputs were hidden"
    assert all((s.attributes or {}).get("output.value") == REDACTED_VALUE for s in tools), "outputs were hidden"
    assert env.tripped() == [] and env.processor.stats.trips == 0
    env.assert_nothing_lost()


def test_a_redacted_loop_is_caught_and_stays_redacted(hidden_env: AgnoEnv) -> None:
    """The same call with the same result, hidden from the spans: the breaker is shown the values in process
    (``adapters/openinference.py``), so the 5th identical call is vetoed before it runs, as without the setting, and
    no exported span carries an argument, a result or a trace of them."""
    env = hidden_env
    secret = "https://x.test/private-account-7781"

    def fetch(url: str) -> str:
        """Fetch a URL."""
        env.tool_bodies.append(url)
        return "403 Forbidden for account 7781"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("fetch", url=secret)]} if i < 12
                     else {"content": "gave up"})
    output = Agent(name="Looper", model=model, tools=[fetch]).run("go")
    assert output.status is RunStatus.cancelled and "[tool_repeat]" in str(output.content)
    assert len(env.tool_bodies) == 4
    tools = [s for s in env.spans() if (s.attributes or {}).get("openinference.span.kind") == "TOOL"]
    assert len(tools) == 5 and env.blocked() == [tools[-1]]
    assert all((s.attributes or {}).get("input.value") == REDACTED_VALUE for s in tools)
    assert all((s.attributes or {}).get("output.value") in (REDACTED_VALUE, None) for s in tools)
    # Agno's instrumentor itself writes the call's arguments, unmasked, as the tool's ``tool.parameters``: the one
    # place they are; the hidden result is nowhere.
    exported = repr([(s.name, {k: v for k, v in (s.attributes or {}).items() if k != "tool.parameters"},
                      [dict(e.attributes or {}) for e in s.events]) for s in env.spans()])
    assert "7781" not in exported, "a hidden value reached an exported span"
    env.assert_nothing_lost()


def _run_the_same_fetch(env: AgnoEnv) -> Any:
    """An agent fetching the same URL, answered the same, turn after turn (12 turns at most)."""

    def fetch(url: str) -> str:
        """Fetch a URL."""
        env.tool_bodies.append(url)
        return "403 Forbidden"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("fetch", url="https://x.test/a")]} if i < 12
                     else {"content": "gave up"})
    return Agent(name="Looper", model=model, tools=[fetch]).run("go")


def test_a_redacted_loop_still_meets_the_budgets(monkeypatch: pytest.MonkeyPatch,
                                                make_env: Callable[..., AgnoEnv]) -> None:
    """Hidden calls are counted like any: a budget under the repeat threshold stops the run first."""
    monkeypatch.setenv("OPENINFERENCE_HIDE_INPUTS", "true")
    monkeypatch.setenv("OPENINFERENCE_HIDE_OUTPUTS", "true")
    env = make_env(max_tool_calls=3)
    output = _run_the_same_fetch(env)
    assert output.status is RunStatus.cancelled and "[call_budget]" in str(output.content)
    assert len(env.tool_bodies) == 3
    env.assert_nothing_lost()


def test_hiding_only_outputs_still_catches_the_loop(monkeypatch: pytest.MonkeyPatch,
                                                    make_env: Callable[..., AgnoEnv]) -> None:
    monkeypatch.setenv("OPENINFERENCE_HIDE_OUTPUTS", "true")
    env = make_env()
    output = _run_the_same_fetch(env)
    assert output.status is RunStatus.cancelled and "[tool_repeat]" in str(output.content)
    assert len(env.tool_bodies) == 4
    tools = [s for s in env.spans() if (s.attributes or {}).get("openinference.span.kind") == "TOOL"]
    assert all((s.attributes or {}).get("input.value") != REDACTED_VALUE for s in tools)
    assert all((s.attributes or {}).get("output.value") in (REDACTED_VALUE, None) for s in tools)
    env.assert_nothing_lost()


def test_a_hidden_result_that_moves_is_not_a_repeat(hidden_env: AgnoEnv) -> None:
    """Polling: the same hidden call, a hidden result that changes each time: progress, quiet."""
    env = hidden_env

    def status(job: str) -> str:
        """A job's status."""
        env.tool_bodies.append(job)
        return f"job {job}: {len(env.tool_bodies) * 10}% done"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("status", job="j1")]} if i < 9 else {"content": "done"})
    output = Agent(name="Poller", model=model, tools=[status]).run("go")
    assert output.status is RunStatus.completed and output.content == "done"
    assert len(env.tool_bodies) == 9 and env.tripped() == []
    env.assert_nothing_lost()


def test_distinct_redacted_delegations_are_not_a_repeat(hidden_env: AgnoEnv) -> None:
    """The member's task and answer are redacted on its agent span: five different tasks with five different
    answers are not "the same task handed to the same agent, same answer back"."""
    from agno.team import Team

    member = Agent(name="Worker", model=scripted(lambda m, i: {"content": f"answer {i}"}))
    leader = scripted(lambda m, i: {"tool_calls": [tool_call(
        "delegate_task_to_member", member_id="worker", task=f"task {i}")]} if i < 5 else {"content": "done"})
    output = Team(name="Crew", model=leader, members=[member]).run("go")
    assert output.status is RunStatus.completed and output.content == "done"
    agents = [s for s in hidden_env.spans() if s.name.startswith("Worker.")]
    assert len(agents) == 5 and all((s.attributes or {}).get("input.value") == REDACTED_VALUE for s in agents)
    assert hidden_env.tripped() == []
    hidden_env.assert_nothing_lost()


def test_a_redacted_delegation_repeat_is_caught(hidden_env: AgnoEnv) -> None:
    """The same task handed to the same member, the same answer back: the member's agent span hides both, the
    breaker is shown them, and the 4th identical delegation is vetoed as without the setting."""
    from agno.team import Team

    member = Agent(name="Researcher", model=scripted(lambda m, i: {"content": "I need the lead to clarify."}))
    leader = scripted(lambda m, i: {"tool_calls": [tool_call(
        "delegate_task_to_member", member_id="researcher", task="find the root cause")]})
    output = Team(name="Lead", model=leader, members=[member]).run("go")
    assert output.status is RunStatus.cancelled and "[delegation_repeat]" in str(output.content)
    assert calls(member.model) == 3  # type: ignore[arg-type]  # the 4th identical delegation is vetoed
    agents = [s for s in hidden_env.spans() if s.name.startswith("Researcher.")]
    assert agents and all((s.attributes or {}).get("input.value") == REDACTED_VALUE for s in agents)
    hidden_env.assert_nothing_lost()
