"""ToolCallingAgent repetition storms (sequential and parallel calls) against pagination and polling."""

from __future__ import annotations

from typing import Any

import pytest
from smolagents import ToolCallingAgent, tool
from smolagents.monitoring import LogLevel

import spanbreaker

from .conftest import Rig
from .scripted import ScriptedModel, call, calls, final_call

MAX_STEPS = 20


def agent(model: ScriptedModel, tools: list[Any], **kwargs: Any) -> ToolCallingAgent:
    kwargs.setdefault("max_steps", MAX_STEPS)
    return ToolCallingAgent(tools=tools, model=model, verbosity_level=LogLevel.OFF, **kwargs)


SEARCHES: list[str] = []


@tool
def web_search(query: str) -> str:
    """Searches the web.

    Args:
        query: what to look for
    """
    SEARCHES.append(query)
    return ""


@tool
def kb_search(query: str) -> str:
    """Searches the knowledge base; it only ever knows one article.

    Args:
        query: what to look for
    """
    return ("Article 1142: OpenTelemetry span processors receive on_start and on_end callbacks for every span; "
            "exporters are wrapped by batch or simple processors.")


@tool
def list_issues(page: int) -> str:
    """Lists issues, one page at a time.

    Args:
        page: page number, from 1
    """
    return "\n".join(f"issue #{page * 10 + i}: crash when parsing header variant {page}-{i}" for i in range(10))


STATUS = {"polls": 0}


@tool
def job_status(job_id: str) -> str:
    """Reports a batch job's state.

    Args:
        job_id: the job
    """
    STATUS["polls"] += 1
    return "done" if STATUS["polls"] >= 12 else "running"


def test_identical_search_with_identical_empty_result_trips_tool_repeat(rig: Rig) -> None:
    SEARCHES.clear()
    model = ScriptedModel([call("web_search", {"query": "spanbreaker pricing"})])
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent(model, [web_search]).run("Find the price")
    assert caught.value.detector == "tool_repeat"
    assert len(SEARCHES) == 4  # the 5th identical call was vetoed before it ran
    assert model.calls == 5
    rig.assert_nothing_lost()
    rig.assert_trip_visible("tool_repeat")


def test_paraphrased_searches_with_the_same_answer_trip(rig: Rig) -> None:
    queries = ["otel span processor callbacks", "span processor callbacks otel", "callbacks otel span processor",
               "processor callbacks otel span", "otel span processors callbacks", "span processor callback otel"]
    model = ScriptedModel([call("kb_search", {"query": q}) for q in queries] + [final_call()])
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent(model, [kb_search]).run("How do span processors work?")
    assert caught.value.detector == "input_fixation"
    assert model.calls == 4
    rig.assert_nothing_lost()


def test_paraphrased_searches_with_empty_results_trip_tool_streak(rig: Rig) -> None:
    SEARCHES.clear()
    model = ScriptedModel([call("web_search", {"query": f"spanbreaker price variant {i}"}) for i in range(30)])
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent(model, [web_search], max_steps=30).run("Find the price")
    assert caught.value.detector == "tool_streak"
    assert len(SEARCHES) == 10
    rig.assert_nothing_lost()


def test_pagination_stays_quiet(rig: Rig) -> None:
    model = ScriptedModel([call("list_issues", {"page": p}) for p in range(1, 16)] + [final_call("15 pages")])
    assert agent(model, [list_issues]).run("List every issue") == "15 pages"
    assert rig.marked() == []
    rig.assert_nothing_lost()


def test_allowlisted_polling_tool_stays_quiet(rig_factory: Any) -> None:
    rig = rig_factory(allowlist=frozenset({"job_status"}))
    STATUS["polls"] = 0
    model = ScriptedModel([call("job_status", {"job_id": "j-1"})] * 12 + [final_call("finished")])
    assert agent(model, [job_status]).run("Wait for the job") == "finished"
    assert STATUS["polls"] == 12
    assert rig.marked() == []
    rig.assert_nothing_lost()


def test_the_same_polling_without_the_allowlist_trips(rig: Rig) -> None:
    STATUS["polls"] = 0
    model = ScriptedModel([call("job_status", {"job_id": "j-1"})] * 12 + [final_call("finished")])
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent(model, [job_status]).run("Wait for the job")
    assert caught.value.detector == "tool_repeat"
    rig.assert_nothing_lost()


def test_parallel_identical_calls_are_stopped_through_the_thread_pool(rig: Rig) -> None:
    SEARCHES.clear()
    storm = calls(*[("web_search", {"query": "spanbreaker pricing"})] * 3)
    model = ScriptedModel([storm])
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent(model, [web_search]).run("Find the price")
    # Identical calls in one turn are one decision (tool_repeat counts turns), but every empty result counts
    # for tool_streak: its tenth is vetoed in the fourth turn's pool.
    assert caught.value.detector == "tool_streak"
    assert len(SEARCHES) <= 12
    assert model.calls <= 4
    rig.assert_nothing_lost()
    blocked = [s for s in rig.spans() if (s.attributes or {}).get("spanbreaker.blocked")]
    assert blocked


def test_parallel_distinct_calls_stay_quiet(rig: Rig) -> None:
    model = ScriptedModel([calls(*[("list_issues", {"page": p}) for p in (1, 2, 3)]),
                           calls(*[("list_issues", {"page": p}) for p in (4, 5, 6)]), final_call("6 pages")])
    assert agent(model, [list_issues]).run("List issues") == "6 pages"
    assert rig.marked() == []
    rig.assert_nothing_lost()
