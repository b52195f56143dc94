"""The BeeAI row of docs/conformance.md, measured: each cell is pinned here."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from importlib.metadata import version

import pytest

import spanbreaker

from ..genai_rig import QUERIES, Ledger, assert_documented, conformance_row, tool_cells_of
from . import scenarios
from .bee import Answer, Call
from .conftest import Traced

pytestmark = pytest.mark.timeout(60)


def test_conformance_row(traced: Callable[..., Traced]) -> None:
    t = traced()
    ledger = Ledger()
    t.provider.add_span_processor(ledger)
    model = scenarios.model_for("tool_calling", [*(Call("web_search", {"query": q}) for q in QUERIES),
                                                 Answer("All sunny.")])
    agent = scenarios.make_agent("tool_calling", model, [scenarios.web_search])
    asyncio.run(asyncio.wait_for(agent.run("Weather?", max_iterations=10), 30.0))
    kind, args, results = tool_cells_of(ledger, t.spans())
    outcomes = [asyncio.run(asyncio.wait_for(scenario("tool_calling", False), 30.0))  # type: ignore[operator]
                for scenario in (scenarios.fixation, scenarios.workflow_revision_loop)]
    stop = "yes" if all(type(o.trip) is spanbreaker.Tripped for o in outcomes) else "no"
    row = conformance_row(
        f"BeeAI {version('beeai-framework')} (ReAct, ToolCalling, Requirement agents; `Workflow`, `AgentWorkflow`)",
        f"openinference-instrumentation-beeai {version('openinference-instrumentation-beeai')}",
        "spanbreaker live spans", (kind, args, results, stop))
    assert_documented(row)
