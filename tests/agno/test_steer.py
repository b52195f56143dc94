"""``response="steer"`` on real Agno agents (the scripted model is the only stub): a loop detector's first finding
fails the tool call through Agno's own tool-error path (``AgentRunException``), its message reaches the model's
next prompt; a model that changes course completes, one that persists is cancelled by the trip."""

from __future__ import annotations

from typing import Any

import pytest
from agno.agent import Agent
from agno.run.base import RunStatus

from spanbreaker.adapters.agno import trip_record

from .conftest import MODES, AgnoEnv, run
from .scripted import calls, scripted, tool_call

pytestmark = pytest.mark.timeout(60)


def said(messages: list[Any]) -> str:
    return "\n".join(str(getattr(m, "content", "")) for m in messages)


def agent(env: AgnoEnv, model: Any) -> Agent:
    def lookup(sku: str) -> str:
        """Look up a SKU."""
        env.tool_bodies.append(sku)
        return "[]"

    return Agent(name="Looker", model=model, tools=[lookup])


def steered(env: AgnoEnv) -> list[Any]:
    return [s for s in env.spans() if (s.attributes or {}).get("spanbreaker.steered")]


@pytest.mark.parametrize("mode", MODES)
def test_model_that_changes_course_completes(make_env: Any, mode: str) -> None:
    env = make_env(response="steer")
    prompts: list[str] = []

    def step(messages: list[Any], index: int) -> dict[str, Any]:
        prompts.append(said(messages))
        if "spanbreaker:" in prompts[-1]:
            return {"content": "SKU A-1 is not in the catalogue."}
        return {"tool_calls": [tool_call("lookup", sku="A-1")]}

    model = scripted(step)
    output = run(agent(env, model), mode)
    assert output.status is RunStatus.completed, (output.status, output.content)
    assert trip_record(output) is None and env.tripped() == []
    assert len(env.tool_bodies) == 4  # the fifth identical call was steered, never run
    steer_prompt = next(p for p in prompts if "spanbreaker:" in p)
    assert "lookup called 5 times" in steer_prompt and "Repeating it again stops the run" in steer_prompt
    assert "A-1" not in steer_prompt.split("spanbreaker:")[1]  # never the raw arguments
    (span,) = steered(env)
    assert span.attributes["spanbreaker.detector"] == "tool_repeat"
    assert span.attributes["spanbreaker.blocked"] is True
    env.assert_nothing_lost()


@pytest.mark.parametrize("mode", MODES)
def test_model_that_persists_is_tripped(make_env: Any, mode: str) -> None:
    env = make_env(response="steer")
    model = scripted(lambda m, i: {"tool_calls": [tool_call("lookup", sku="A-1")]})
    output = run(agent(env, model), mode)
    assert output.status is RunStatus.cancelled, (output.status, output.content)
    record = trip_record(output)
    assert record is not None and record.detector == "tool_repeat"
    assert len(env.tool_bodies) == 4 and calls(model) == 6  # steered at the 5th call, tripped at the 6th
    assert len(steered(env)) == 1
    env.assert_nothing_lost()
