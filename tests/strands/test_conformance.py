"""The Strands Agents rows of docs/conformance.md (stock and with the spanbreaker adapter, in Strands' default
telemetry and under ``gen_ai_latest_experimental``; the default ``ConcurrentToolExecutor``), measured: each cell is
pinned here."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import pytest

import spanbreaker

from ..genai_rig import QUERIES, assert_documented, conformance_row, tool_cells
from .scripted import Scripted
from .test_agents import LIMITS, loop, queries, weather_agent


def stop_cell(env: Any) -> str:
    scripted = Scripted(loop)
    before = len(env.tool_bodies)
    try:
        weather_agent(env, scripted)("What's the weather?", limits=LIMITS)
    except spanbreaker.Tripped:
        return f"yes, after {len(env.tool_bodies) - before} tool calls"
    if env.processor.stats.trips:
        return (f"no: the trip dies in the concurrent executor's tool task; the run went on to Strands' own turn "
                f"limit ({scripted.calls} model calls)")
    return f"no: nothing is vetoed ({len(env.tool_bodies) - before} tool calls, to Strands' own turn limit)"


@pytest.mark.parametrize("adapter", [False, True], ids=["stock", "adapter"])
@pytest.mark.parametrize("mode", ["default", "latest"])
def test_conformance_row(make_env: Any, mode: str, adapter: bool) -> None:
    env = make_env(mode, instrument=adapter)
    weather_agent(env, Scripted(queries(QUERIES)))("What's the weather?", limits=LIMITS)
    kind, args, results = tool_cells(env)
    stop = stop_cell(env)
    telemetry = "default telemetry" if mode == "default" else "`gen_ai_latest_experimental`"
    row = conformance_row(f"Strands Agents {version('strands-agents')} (`ConcurrentToolExecutor`)",
                          "Strands' own GenAI spans", f"{'spanbreaker adapter' if adapter else 'stock'}, {telemetry}",
                          (kind, args, results, stop))
    print(row)
    assert_documented(row)
