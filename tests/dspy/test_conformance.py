"""The DSPy rows of docs/conformance.md, measured: what the instrumentor's tool spans carry at start and at end,
and whether a trip reaches the caller of ``react(...)``, with the stock instrumentor and with spanbreaker's adapter.

Each cell is measured here on a real ``dspy.ReAct`` and compared with the row in the docs, so an instrumentor or
DSPy upgrade that changes one fails loudly, naming the cell.
"""

from __future__ import annotations

from importlib.metadata import version

import pytest
from openinference.instrumentation.dspy import DSPyInstrumentor

import spanbreaker
from spanbreaker.adapters.dspy import ADAPTER

from ..genai_rig import Rig, assert_documented, conformance_row, make_rig, tool_cells
from .scripted import agent


def _measure(setup: str) -> tuple[str, ...]:
    """The row's four cells for ``setup``: ``stock`` (the instrumentor alone) or ``adapter`` (spanbreaker's)."""
    spanbreaker.instrumentation.uninstrument()
    rig: Rig = make_rig()
    instrumentor = DSPyInstrumentor()
    if setup == "adapter":
        ADAPTER.instrument(rig.provider, rig.processor)
    else:
        instrumentor.instrument(tracer_provider=rig.provider)
    try:
        with agent("wide") as healthy:
            healthy()
        cells = tool_cells(rig)
        stops = []
        for asynchronous in (False, True):  # ``react(...)`` and ``await react.acall(...)``: one cell for both
            with agent("loop") as looping:
                try:
                    looping.run_async() if asynchronous else looping()
                    stops.append("no: nothing is vetoed")
                except spanbreaker.Tripped:
                    stops.append(f"yes, after {len(looping.searches)} tool calls")
        assert stops[0] == stops[1], stops
        return (*cells, stops[0])
    finally:
        if setup == "adapter":
            ADAPTER.uninstrument()
        else:
            instrumentor.uninstrument()
        rig.provider.shutdown()


@pytest.mark.parametrize("setup", ["stock", "adapter"])
def test_dspy_row(setup: str) -> None:
    framework = f"DSPy {version('dspy')} (`ReAct`, sync and `acall`)"
    instrumentor = f"openinference-instrumentation-dspy {version('openinference-instrumentation-dspy')}"
    label = "stock" if setup == "stock" else "spanbreaker adapter"
    assert_documented(conformance_row(framework, instrumentor, label, _measure(setup)))
