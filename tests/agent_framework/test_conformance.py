"""The Microsoft Agent Framework rows of docs/conformance.md (stock spans, no adapter; sensitive data off, Agent
Framework's default, and on), measured: each cell is pinned here."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import pytest

import spanbreaker

from ..genai_rig import QUERIES, assert_documented, conformance_row, tool_cells
from .scripted import Scripted
from .test_agents import loop, queries, run, weather_agent


def stop_cell(env: Any) -> str:
    before = len(env.tool_bodies)
    try:
        run(weather_agent(env, Scripted(loop)))
    except spanbreaker.Tripped:
        return f"yes, after {len(env.tool_bodies) - before} tool calls"
    return (f"no: nothing is vetoed ({len(env.tool_bodies) - before} tool calls, to Agent Framework's own "
            f"function-calling limit)")


@pytest.mark.parametrize("sensitive", [False, True], ids=["sensitive-off", "sensitive-on"])
def test_conformance_row(make_env: Any, sensitive: bool) -> None:
    env = make_env(sensitive=sensitive)
    run(weather_agent(env, Scripted(queries(QUERIES))))
    kind, args, results = tool_cells(env)
    stop = stop_cell(env)
    row = conformance_row(f"Microsoft Agent Framework {version('agent-framework-core')} (`Agent`)",
                          "Agent Framework's own GenAI spans", f"stock, sensitive data {'on' if sensitive else 'off'}",
                          (kind, args, results, stop))
    print(row)
    assert_documented(row)
