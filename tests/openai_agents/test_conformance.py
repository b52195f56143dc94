"""The OpenAI Agents SDK row of docs/conformance.md, measured: each cell is pinned here."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from agents import Runner

import spanbreaker

from ..genai_rig import QUERIES, Rig, assert_documented, conformance_row, tool_cells
from .test_agents import loop, queries, weather_agent


def test_conformance_row(make_env: pytest.FixtureRequest) -> None:
    healthy: Rig = make_env()  # type: ignore[operator]
    agent, _ = weather_agent(healthy, queries(QUERIES))
    Runner.run_sync(agent, "What's the weather?", max_turns=30)
    kind, args, results = tool_cells(healthy)
    looping, _ = weather_agent(healthy, loop)
    try:
        Runner.run_sync(looping, "What's the weather?", max_turns=30)
        stop = "no"
    except spanbreaker.Tripped:
        stop = "yes"
    row = conformance_row(
        f"OpenAI Agents SDK {version('openai-agents')}",
        f"openinference-instrumentation-openai-agents {version('openinference-instrumentation-openai-agents')}",
        "spanbreaker adapter", (kind, args, results, stop))
    assert_documented(row)
