"""Per-trace budgets (tokens, model calls, cost) on a long but otherwise healthy-looking run.

The run pages through issues, so no repetition detector fires: only the budget can stop it. Below the budget
the same run completes untouched.
"""

from __future__ import annotations

from typing import Any

import pytest
from smolagents import ToolCallingAgent
from smolagents.monitoring import LogLevel

import spanbreaker

from .conftest import Rig
from .scripted import ScriptedModel, call, final_call
from .test_tool_calling_agent import list_issues

PAGES = 12


def paging_agent(model_id: str = "scripted-model") -> tuple[ToolCallingAgent, ScriptedModel]:
    model = ScriptedModel([call("list_issues", {"page": p}) for p in range(1, PAGES + 1)] + [final_call("all")],
                          model_id=model_id)
    return ToolCallingAgent(tools=[list_issues], model=model, max_steps=30, verbosity_level=LogLevel.OFF), model


@pytest.mark.parametrize(
    ("config", "detector", "model_calls"),
    [
        ({"max_tokens": 2_000}, "token_budget", 5),           # 440 tokens a call: 2,200 after 5 calls
        ({"max_model_calls": 6}, "call_budget", 6),           # the 7th call is the one refused
        ({"max_tool_calls": 4}, "call_budget", 5),            # the 5th tool call is refused
        ({"max_cost_usd": 0.005}, "cost_budget", 4),          # gpt-4o: $0.0014 a call
    ],
)
def test_budget_stops_the_run(rig_factory: Any, config: dict[str, Any], detector: str, model_calls: int) -> None:
    rig: Rig = rig_factory(**config)
    agent, model = paging_agent("gpt-4o")
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent.run("List every issue")
    assert caught.value.detector == detector
    assert model.calls == model_calls
    rig.assert_nothing_lost()
    rig.assert_trip_visible(detector)


def test_the_same_run_within_budget_stays_quiet(rig_factory: Any) -> None:
    rig: Rig = rig_factory(max_tokens=20_000, max_model_calls=20, max_tool_calls=20, max_cost_usd=1.0)
    agent, model = paging_agent("gpt-4o")
    assert agent.run("List every issue") == "all"
    assert model.calls == PAGES + 1
    assert rig.marked() == []
    rig.assert_nothing_lost()
