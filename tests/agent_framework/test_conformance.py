"""The Microsoft Agent Framework rows of docs/conformance.md (its own spans, stock and with spanbreaker's adapter;
sensitive data off, Agent Framework's default, and on), measured: each cell is pinned here. The adapter adds nothing
to the spans (the tool cells are the same as stock); it shows the breaker the calls in process."""

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


@pytest.mark.parametrize(("sensitive", "adapter"), [(False, False), (True, False), (False, True)],
                         ids=["stock-sensitive-off", "stock-sensitive-on", "adapter-sensitive-off"])
def test_conformance_row(make_env: Any, sensitive: bool, adapter: bool) -> None:
    env = make_env(sensitive=sensitive, adapter=adapter)
    run(weather_agent(env, Scripted(queries(QUERIES))))
    kind, args, results = tool_cells(env)
    stop = stop_cell(env)
    setup = f"{'spanbreaker adapter' if adapter else 'stock'}, sensitive data {'on' if sensitive else 'off'}"
    row = conformance_row(f"Microsoft Agent Framework {version('agent-framework-core')} (`Agent`)",
                          "Agent Framework's own GenAI spans", setup, (kind, args, results, stop))
    print(row)
    assert_documented(row)
