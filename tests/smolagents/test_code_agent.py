"""CodeAgent failure modes: each trips, and its healthy look-alike stays quiet."""

from __future__ import annotations

from typing import Any

import pytest
from smolagents import CodeAgent, tool
from smolagents.monitoring import LogLevel

import spanbreaker

from .conftest import Rig
from .scripted import ScriptedModel, code, final_code, text

MAX_STEPS = 20


def agent(model: ScriptedModel, tools: list[Any] | None = None, **kwargs: Any) -> CodeAgent:
    kwargs.setdefault("max_steps", MAX_STEPS)
    return CodeAgent(tools=tools or [], model=model, verbosity_level=LogLevel.OFF, **kwargs)


@tool
def fetch_row(key: str) -> str:
    """Reads one row of the quarterly table.

    Args:
        key: the row key
    """
    return {"q1": "120", "q2": "135"}[key]


@tool
def lookup(i: int) -> str:
    """Looks one record up.

    Args:
        i: record number
    """
    return f"record {i}"


# ------------------------------------------------------------------------------------ code-repair loop
def test_code_repair_loop_in_plain_code_trips_error_loop(rig: Rig) -> None:
    model = ScriptedModel([code(f'data = {{"q1": 1}}\nprint(data["{k}"])') for k in "abcdefgh"])
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent(model).run("Sum the quarters")
    assert caught.value.detector == "error_loop"
    assert "KeyError" in caught.value.reason
    assert model.calls == 4  # the 5th model call was refused before it was made
    rig.assert_nothing_lost()
    rig.assert_trip_visible("error_loop")


def test_code_repair_loop_through_a_tool_trips_error_loop(rig: Rig) -> None:
    model = ScriptedModel([code(f'print(fetch_row(key="{k}"))') for k in "abcdefgh"])
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent(model, [fetch_row]).run("Read the totals")
    assert caught.value.detector == "error_loop"
    assert "KeyError" in caught.value.reason
    assert model.calls == 4
    rig.assert_nothing_lost()
    rig.assert_trip_visible("error_loop")


def test_fixing_one_error_and_meeting_another_stays_quiet(rig: Rig) -> None:
    model = ScriptedModel([
        code('print({"q1": 1}["total"])'),
        code('print({"q1": 1}["sum"])'),
        code('print(1 + "1")'),           # TypeError
        code("print(1 / 0)"),             # ZeroDivisionError
        code("print(undefined_name)"),    # NameError (InterpreterError in smolagents)
        code('print({"q1": 1}["q2"])'),   # KeyError again, count restarts
        final_code("255"),
    ])
    assert agent(model).run("Sum the quarters") == "255"
    assert rig.marked() == []
    rig.assert_nothing_lost()


# ------------------------------------------------------------------------- many tool calls in one step
def test_tool_loop_inside_one_step_is_stopped_and_agent_code_cannot_catch_it(rig: Rig) -> None:
    source = """
results = []
for i in range(500):
    try:
        results.append(lookup(i=i))
    except BaseException as exc:
        results.append(str(exc))
print(len(results))
"""
    model = ScriptedModel([code(source), final_code()])
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent(model, [lookup]).run("Look everything up")
    assert caught.value.detector == "call_budget"
    assert model.calls == 1
    tool_spans = rig.tool_spans("lookup")
    assert len(tool_spans) == 101  # 100 ran, the 101st was blocked; the loop went no further
    rig.assert_nothing_lost()
    rig.assert_trip_visible("call_budget")


def test_a_moderate_loop_of_tool_calls_stays_quiet(rig: Rig) -> None:
    model = ScriptedModel([code("print([lookup(i=i) for i in range(60)][-1])"), final_code()])
    assert agent(model, [lookup]).run("Look some up") == "done"
    assert rig.marked() == []
    rig.assert_nothing_lost()


# ------------------------------------------------------------------------------------- format retries
def test_unparsable_output_step_after_step_trips_format_loop(rig: Rig) -> None:
    model = ScriptedModel([text("I think the answer is probably 42, let me explain at length.")])
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent(model, max_steps=30).run("Answer")
    assert caught.value.detector == "format_loop"
    assert model.calls == 10
    rig.assert_nothing_lost()
    rig.assert_trip_visible("format_loop")


def test_occasional_format_slips_stay_quiet(rig: Rig) -> None:
    model = ScriptedModel([text("hmm"), text("let me think"), code("x = 1\nprint(x)"), text("oops"),
                           final_code("1")])
    assert agent(model).run("Answer") == "1"
    assert rig.marked() == []
    rig.assert_nothing_lost()


# ---------------------------------------------------------------------------------- context inflation
def test_printing_a_huge_dataframe_trips_context_growth_before_the_call_is_paid(rig: Rig) -> None:
    frame = ("| id | name | value | comment |\\n" + "| 1 | widget | 3.14 | nothing to see here |\\n" * 9000)
    model = ScriptedModel([code(f'print("{frame}")'), final_code()])
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent(model, max_print_outputs_length=2_000_000).run("Show me the table")
    assert caught.value.detector == "context_growth"
    assert model.calls == 1  # the inflated prompt was never sent
    rig.assert_nothing_lost()
    rig.assert_trip_visible("context_growth")


def test_steady_growth_over_30_steps_stays_quiet(rig: Rig) -> None:
    model = ScriptedModel([code(f'print("row {i}: " + "x" * 1500)') for i in range(30)] + [final_code()])
    assert agent(model, max_steps=40).run("Walk the table") == "done"
    assert model.calls == 31
    assert rig.marked() == []
    rig.assert_nothing_lost()
