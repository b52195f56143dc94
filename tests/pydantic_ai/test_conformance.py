"""The pydantic-ai rows of docs/conformance.md (its default data format and the deprecated ``version=2``),
measured: each cell is pinned here."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import pytest

import spanbreaker

from ..genai_rig import QUERIES, assert_documented, conformance_row, tool_cells
from .scripted import Scripted
from .test_agents import LIMITS, loop, queries, weather_agent


@pytest.mark.parametrize("data_format", [None, 2], ids=["default", "version-2"])
def test_conformance_row(make_env: Any, data_format: int | None) -> None:
    env = make_env(version=data_format)
    weather_agent(env, Scripted(queries(QUERIES))).run_sync("Weather?", usage_limits=LIMITS)
    kind, args, results = tool_cells(env)
    try:
        weather_agent(env, Scripted(loop)).run_sync("Weather?", usage_limits=LIMITS)
        stop = "no"
    except spanbreaker.Tripped:
        stop = "yes"
    setup = "default data format" if data_format is None else f"`version={data_format}`"
    row = conformance_row(f"pydantic-ai-slim {version('pydantic-ai-slim')}", "pydantic-ai's own GenAI spans", setup,
                          (kind, args, results, stop))
    assert_documented(row)
