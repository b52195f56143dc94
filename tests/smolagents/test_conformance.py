"""The smolagents row of docs/conformance.md, measured: each cell is pinned here."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from smolagents import ToolCallingAgent, tool
from smolagents.monitoring import LogLevel

import spanbreaker

from ..genai_rig import QUERIES, Ledger, assert_documented, conformance_row, tool_cells_of
from .conftest import Rig
from .scripted import ScriptedModel, call, final_call


@tool
def search(query: str) -> str:
    """Searches the web.

    Args:
        query: what to look for
    """
    return "Paris weather: sunny, 20C"


def test_conformance_row(rig: Rig) -> None:
    ledger = Ledger()
    rig.provider.add_span_processor(ledger)
    model = ScriptedModel([*(call("search", {"query": q}) for q in QUERIES), final_call("All sunny.")])
    ToolCallingAgent(tools=[search], model=model, verbosity_level=LogLevel.OFF, max_steps=10).run("Weather?")
    kind, args, results = tool_cells_of(ledger, rig.spans())
    looping = ScriptedModel([call("search", {"query": "weather in Paris"})])
    try:
        ToolCallingAgent(tools=[search], model=looping, verbosity_level=LogLevel.OFF, max_steps=10).run("Weather?")
        stop = "no"
    except spanbreaker.Tripped:
        stop = "yes"
    row = conformance_row(f"smolagents {version('smolagents')}", "openinference-instrumentation-smolagents "
                          f"{version('openinference-instrumentation-smolagents')}", "spanbreaker adapter",
                          (kind, args, results, stop))
    assert_documented(row)


pytestmark = pytest.mark.timeout(60)
