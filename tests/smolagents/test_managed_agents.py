"""Managed agents: a trip anywhere in the tree stops the whole tree; one normal delegation stays quiet."""

from __future__ import annotations

from typing import Any

import pytest
from smolagents import CodeAgent, ToolCallingAgent
from smolagents.monitoring import LogLevel

import spanbreaker

from .conftest import Rig
from .scripted import ScriptedModel, call, code, final_call, final_code


def specialist(name: str, model: ScriptedModel, managed: list[Any] | None = None) -> ToolCallingAgent:
    return ToolCallingAgent(tools=[], model=model, name=name, description=f"The {name} agent.",
                            managed_agents=managed or [], max_steps=10, verbosity_level=LogLevel.OFF)


def orchestrator(model: ScriptedModel, managed: list[Any], name: str | None = None) -> CodeAgent:
    return CodeAgent(tools=[], model=model, managed_agents=managed, name=name,
                     description="Plans and delegates." if name else None, max_steps=10,
                     verbosity_level=LogLevel.OFF)


def test_orchestrator_specialist_cycle_trips_delegation_cycle_and_stops_the_tree(rig: Rig) -> None:
    inner = orchestrator(ScriptedModel([final_code("never")]), [], name="orchestrator")
    middle_model = ScriptedModel([call("orchestrator", {"task": "Plan it again"}), final_call("x")])
    middle = specialist("specialist", middle_model, [inner])
    top_model = ScriptedModel([code('print(specialist(task="Check the figures"))'), final_code("x")])
    top = orchestrator(top_model, [middle], name="orchestrator")
    with pytest.raises(spanbreaker.Tripped) as caught:
        top.run("Prepare the report")
    assert caught.value.detector == "delegation_cycle"
    assert (top_model.calls, middle_model.calls, inner.model.calls) == (1, 1, 0)  # type: ignore[attr-defined]
    rig.assert_nothing_lost()
    rig.assert_trip_visible("delegation_cycle")
    runs = rig.named(".run")
    assert len(runs) == 3 and all(s.status.status_code.name == "ERROR" for s in runs)


def test_excessive_depth_trips_delegation_depth(rig: Rig) -> None:
    bottom = specialist("level5", ScriptedModel([final_call("bottom")]))
    agent: Any = bottom
    for i in range(4, 1, -1):
        agent = specialist(f"level{i}", ScriptedModel([call(f"level{i + 1}", {"task": "go deeper"})]), [agent])
    top_model = ScriptedModel([code('print(level2(task="go deeper"))'), final_code("x")])
    top = orchestrator(top_model, [agent])
    with pytest.raises(spanbreaker.Tripped) as caught:
        top.run("Dig")
    assert caught.value.detector == "delegation_depth"
    assert bottom.model.calls == 0  # type: ignore[attr-defined]
    rig.assert_nothing_lost()
    rig.assert_trip_visible("delegation_depth")


def _delegations_rig(rig_factory: Any, monkeypatch: pytest.MonkeyPatch, values: str) -> Rig:
    """A rig; with ``values`` "hidden", the instrumentor hides every input and output (``OPENINFERENCE_HIDE_*``): the
    agent spans carry neither task nor answer, and the breaker is shown them in process (adapters/openinference.py)."""
    if values == "hidden":
        monkeypatch.setenv("OPENINFERENCE_HIDE_INPUTS", "true")
        monkeypatch.setenv("OPENINFERENCE_HIDE_OUTPUTS", "true")
    return rig_factory()  # type: ignore[no-any-return]


def _assert_hidden_as_set(rig: Rig, values: str) -> None:
    agents = [s for s in rig.spans() if (s.attributes or {}).get("openinference.span.kind") == "AGENT"]
    tasks = {(s.attributes or {}).get("input.value") for s in agents}
    assert (tasks == {"__REDACTED__"}) is (values == "hidden"), tasks


@pytest.mark.parametrize("values", ["on spans", "hidden"])
def test_the_same_task_handed_to_the_same_specialist_again_and_again_trips_delegation_repeat(
        rig_factory: Any, monkeypatch: pytest.MonkeyPatch, values: str) -> None:
    rig = _delegations_rig(rig_factory, monkeypatch, values)
    helper_model = ScriptedModel([final_call("I could not find the Q3 figures.")])
    top_model = ScriptedModel([code('print(analyst(task="Find the Q3 figures"))')])
    top = orchestrator(top_model, [specialist("analyst", helper_model)])
    with pytest.raises(spanbreaker.Tripped) as caught:
        top.run("Report Q3")
    assert caught.value.detector == "delegation_repeat"
    assert helper_model.calls == 3  # the 4th identical delegation never started
    _assert_hidden_as_set(rig, values)
    rig.assert_nothing_lost()
    rig.assert_trip_visible("delegation_repeat")


@pytest.mark.parametrize("values", ["on spans", "hidden"])
def test_delegations_whose_answers_change_stay_quiet(rig_factory: Any, monkeypatch: pytest.MonkeyPatch,
                                                     values: str) -> None:
    rig = _delegations_rig(rig_factory, monkeypatch, values)
    answers = [final_call(f"Still collecting: {n} of 5 regions in.") for n in range(1, 6)]
    helper_model = ScriptedModel(answers)
    top_model = ScriptedModel([code('print(analyst(task="Find the Q3 figures"))')] * 5 + [final_code("Q3 done")])
    top = orchestrator(top_model, [specialist("analyst", helper_model)])
    assert top.run("Report Q3") == "Q3 done"
    assert helper_model.calls == 5
    assert rig.marked() == []
    _assert_hidden_as_set(rig, values)
    rig.assert_nothing_lost()


def test_one_normal_delegation_stays_quiet(rig: Rig) -> None:
    helper_model = ScriptedModel([final_call("Q1 120, Q2 135")])
    top_model = ScriptedModel([code('r = analyst(task="Read the figures")\nprint(r)'), final_code("255")])
    top = orchestrator(top_model, [specialist("analyst", helper_model)])
    assert top.run("Sum the quarters") == "255"
    assert rig.marked() == []
    rig.assert_nothing_lost()
    inner = rig.named("analyst.run")[0]
    steps = {s.context.span_id: s for s in rig.spans() if s.name.startswith("Step")}
    assert inner.parent is not None and inner.parent.span_id in steps  # nested under the caller's step


def test_a_loop_inside_a_specialist_stops_the_orchestrator_too(rig: Rig) -> None:
    helper_model = ScriptedModel([call("final_answer", {"answer": "x"})])
    searches = ScriptedModel([call("web_search", {"query": "q1 revenue"})])
    from .test_tool_calling_agent import web_search

    helper = ToolCallingAgent(tools=[web_search], model=searches, name="researcher", description="Researches.",
                              max_steps=20, verbosity_level=LogLevel.OFF)
    top_model = ScriptedModel([code('print(researcher(task="Find Q1 revenue"))'), final_code("x")])
    top = orchestrator(top_model, [helper])
    with pytest.raises(spanbreaker.Tripped) as caught:
        top.run("Report")
    assert caught.value.detector == "tool_repeat"
    assert top_model.calls == 1 and searches.calls == 5
    assert helper_model.calls == 0
    rig.assert_nothing_lost()
    rig.assert_trip_visible("tool_repeat")


def test_budgets_count_managed_agents_calls(rig_factory: Any) -> None:
    rig = rig_factory(max_model_calls=6)
    helper_model = ScriptedModel([call("list_issues", {"page": p}) for p in range(1, 20)])
    from .test_tool_calling_agent import list_issues

    helper = ToolCallingAgent(tools=[list_issues], model=helper_model, name="lister", description="Lists.",
                              max_steps=20, verbosity_level=LogLevel.OFF)
    top_model = ScriptedModel([code('print(lister(task="List all"))'), final_code("x")])
    with pytest.raises(spanbreaker.Tripped) as caught:
        orchestrator(top_model, [helper]).run("Report")
    assert caught.value.detector == "call_budget"
    assert top_model.calls + helper_model.calls == 6
    rig.assert_nothing_lost()
