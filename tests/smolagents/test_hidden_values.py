"""OpenInference's ``hide_inputs`` / ``hide_outputs`` keep a tool call's values off the spans; the breaker still
knows them (shown in process by ``adapters/openinference.py``) and catches a loop as it would without the setting.
(Hidden agent tasks and answers: ``test_managed_agents.py``, run both ways.)

Real smolagents ToolCallingAgent, the real instrumentor under ``OPENINFERENCE_HIDE_INPUTS`` /
``OPENINFERENCE_HIDE_OUTPUTS`` (read when it is instrumented); the scripted model is the only stub.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from openinference.instrumentation.config import REDACTED_VALUE
from smolagents import tool

import spanbreaker

from .conftest import Rig
from .scripted import ScriptedModel, call, final_call
from .test_tool_calling_agent import agent, list_issues

LOOKUPS: list[str] = []


@tool
def account_lookup(account: str) -> str:
    """Looks an account up.

    Args:
        account: the account number
    """
    LOOKUPS.append(account)
    return f"account {account}: locked, call support"


@pytest.fixture
def hidden_rig(monkeypatch: pytest.MonkeyPatch, rig_factory: Callable[..., Rig]) -> Rig:
    monkeypatch.setenv("OPENINFERENCE_HIDE_INPUTS", "true")
    monkeypatch.setenv("OPENINFERENCE_HIDE_OUTPUTS", "true")
    return rig_factory()


def test_a_hidden_loop_is_vetoed_at_the_fifth_call(hidden_rig: Rig) -> None:
    LOOKUPS.clear()
    model = ScriptedModel([call("account_lookup", {"account": "AC-99107"})])
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent(model, [account_lookup]).run("Unlock my account")
    assert caught.value.detector == "tool_repeat"
    assert len(LOOKUPS) == 4  # the 5th identical call was vetoed before it ran
    tools = hidden_rig.tool_spans("account_lookup")
    assert len(tools) == 5
    assert all((s.attributes or {}).get("input.value") == REDACTED_VALUE for s in tools)
    assert all((s.attributes or {}).get("output.value") in (REDACTED_VALUE, None) for s in tools)
    exported = repr([(dict(s.attributes or {}), [dict(e.attributes or {}) for e in s.events])
                     for s in hidden_rig.spans()])
    assert "99107" not in exported, "a hidden value reached an exported span"
    assert "99107" not in repr(caught.value.evidence) + str(caught.value)
    hidden_rig.assert_trip_visible("tool_repeat")
    hidden_rig.assert_nothing_lost()


def test_hidden_pagination_stays_quiet(hidden_rig: Rig) -> None:
    model = ScriptedModel([call("list_issues", {"page": page}) for page in range(1, 13)] + [final_call("read all")])
    assert agent(model, [list_issues]).run("Read every issue") == "read all"
    assert len(hidden_rig.tool_spans("list_issues")) == 12
    assert hidden_rig.processor.stats.trips == 0
    hidden_rig.assert_nothing_lost()

