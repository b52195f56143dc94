"""The Microsoft AutoGen rows of docs/conformance.md (autogen-core's own GenAI spans, stock and with spanbreaker's
AutoGen adapter), measured: each cell is pinned here."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import pytest

import spanbreaker

from ..genai_rig import QUERIES, assert_documented, conformance_row, tool_cells
from .scripted import loop, queries, scripted
from .test_agents import run, weather_agent

ITERATIONS = 12


def stop_cell(env: Any) -> str:
    before = len(env.tool_bodies)
    try:
        run(weather_agent(env, scripted(loop(calls=100)), iterations=ITERATIONS))
    except spanbreaker.Tripped:
        return f"yes, after {len(env.tool_bodies) - before} tool calls, out of `run` / `run_stream`"
    return (f"no: nothing is vetoed ({len(env.tool_bodies) - before} tool calls, to AutoGen's own "
            f"`max_tool_iterations={ITERATIONS}`)")


@pytest.mark.parametrize("adapter", [False, True], ids=["stock", "adapter"])
def test_conformance_row(make_env: Any, adapter: bool) -> None:
    env = make_env(adapter=adapter)
    run(weather_agent(env, scripted(queries(QUERIES))))
    kind, args, results = tool_cells(env)
    stop = stop_cell(env)
    row = conformance_row(f"AutoGen AgentChat {version('autogen-agentchat')} (`AssistantAgent`), autogen-core "
                          f"{version('autogen-core')}", "autogen-core's own GenAI spans",
                          "spanbreaker adapter" if adapter else "stock", (kind, args, results, stop))
    print(row)
    assert_documented(row)
