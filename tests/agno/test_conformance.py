"""The Agno row of docs/conformance.md, measured: each cell is pinned here."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from agno.agent import Agent
from agno.run.base import RunStatus
from agno.workflow import Step, Workflow

from spanbreaker.adapters.agno import trip_record

from ..genai_rig import QUERIES, Ledger, assert_documented, conformance_row, tool_cells_of
from .conftest import AgnoEnv
from .scripted import scripted, tool_call

pytestmark = pytest.mark.timeout(60)


def search(query: str) -> str:
    """Search the web."""
    return "Paris weather: sunny, 20C"


def test_conformance_row(env: AgnoEnv) -> None:
    ledger = Ledger()
    env.provider.add_span_processor(ledger)
    steps = [{"tool_calls": [tool_call("search", query=q)]} for q in QUERIES] + [{"content": "All sunny."}]
    Agent(name="Healthy", model=scripted(steps), tools=[search]).run("Weather?")
    kind, args, results = tool_cells_of(ledger, env.spans())

    def looping() -> Agent:
        return Agent(name="Looper", model=scripted(lambda m, i: {"tool_calls": [tool_call(
            "search", query="weather in Paris")]} if i < 10 else {"content": "gave up"}), tools=[search])

    outputs = [looping().run("Weather?"),
               Workflow(name="Pipeline", steps=[Step(name="look", agent=looping())]).run("Weather?")]
    stopped = all(o.status is RunStatus.cancelled and trip_record(o) is not None for o in outputs)
    stop = "yes, as Agno's own stop: the agent, team or workflow returns CANCELLED with the trip" if stopped else "no"
    row = conformance_row(f"Agno {version('agno')} (Agent, Team, Workflow, `TeamMode.tasks`, `continue_run`)",
                          f"openinference-instrumentation-agno {version('openinference-instrumentation-agno')}",
                          "spanbreaker adapter", (kind, args, results, stop))
    assert_documented(row)
