"""Values an instrumentor redacts are unknown, never identical.

OpenInference's ``TraceConfig`` (``hide_inputs`` / ``hide_outputs``, also from ``OPENINFERENCE_HIDE_INPUTS`` /
``OPENINFERENCE_HIDE_OUTPUTS``) writes ``__REDACTED__`` in place of a call's arguments and result. Read as text,
every redacted call would look like every other: six different fetches with six different pages would trip as a
repeat. Real Agno agent, the real instrumentor under those settings; the scripted model is the only stub.
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
from .scripted import scripted, tool_call

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


def test_a_redacted_loop_still_meets_the_budgets(monkeypatch: pytest.MonkeyPatch,
                                                make_env: Callable[..., AgnoEnv]) -> None:
    """Unknown is not free: the same redacted call over and over is not read as a repeat, but it is counted."""
    monkeypatch.setenv("OPENINFERENCE_HIDE_INPUTS", "true")
    monkeypatch.setenv("OPENINFERENCE_HIDE_OUTPUTS", "true")
    env = make_env(max_tool_calls=6)

    def fetch(url: str) -> str:
        """Fetch a URL."""
        env.tool_bodies.append(url)
        return "403 Forbidden"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("fetch", url="https://x.test/a")]} if i < 12
                     else {"content": "gave up"})
    output = Agent(name="Looper", model=model, tools=[fetch]).run("go")
    assert output.status is RunStatus.cancelled and "[call_budget]" in str(output.content)
    assert len(env.tool_bodies) == 6
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
