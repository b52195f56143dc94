"""Polling with a tool nobody put on the allowlist, on LangGraph's ReAct agent: a job whose status answers "running"
several times before it is done is healthy waiting; a job that never finishes is still stopped, later than a loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool, tool

import spanbreaker

from .conftest import LangGraphEnv, run
from .scripted import Calls, ScriptedChatModel, react_agent

CHECK = ("job_status", {"job_id": "build-42"})


def _poll_until_done(turn: int, messages: Sequence[BaseMessage]) -> list[tuple[str, dict[str, Any]]] | str:
    last = messages[-1].content if messages else ""
    return "The build finished." if isinstance(last, str) and '"succeeded"' in last else [CHECK]


def _job_status(calls: Calls, running_for: int) -> BaseTool:
    @tool
    def job_status(job_id: str) -> str:
        """The status of a build job."""
        with calls.lock:
            calls.tools += 1
            polls = calls.tools
        state = "running" if polls <= running_for else "succeeded"
        return f'{{"job_id": "{job_id}", "status": "{state}"}}'

    return job_status


def test_a_job_polled_until_it_is_done_runs_to_its_answer(env: LangGraphEnv) -> None:
    calls = Calls()
    graph = react_agent(ScriptedChatModel(script=_poll_until_done, calls=calls), [_job_status(calls, running_for=8)])
    final = run(graph, "sync", "Start the build and tell me when it is done.")
    assert final["messages"][-1].content == "The build finished."
    assert calls.tools == 9  # eight "running" answers, then "succeeded": twice the loop limit, and no trip
    assert env.marked("spanbreaker.tripped") == []
    env.assert_nothing_lost()


def test_a_job_that_never_finishes_is_stopped_at_three_times_the_loop_limit(env: LangGraphEnv) -> None:
    calls = Calls()
    graph = react_agent(ScriptedChatModel(script=_poll_until_done, calls=calls), [_job_status(calls, running_for=99)])
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(graph, "sync", "Start the build and tell me when it is done.")
    assert caught.value.detector == "tool_repeat" and caught.value.evidence["polling"] is True
    assert calls.tools == 12  # 3 x tool_repeat_max polls ran; the thirteenth was vetoed
    env.assert_nothing_lost()
