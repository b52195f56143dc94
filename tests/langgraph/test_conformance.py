"""The LangChain rows of docs/conformance.md, measured: what the instrumentor's spans carry at start and at end,
and whether a trip reaches the caller, with the stock instrumentor and with spanbreaker's adapter.

Each cell is measured here on a real LangGraph agent and compared with the row in the docs, so an instrumentor
upgrade that changes one (kind or arguments at start, results at end, the stop) fails loudly and names the cell.
"""

from __future__ import annotations

import re
import threading
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import Span, SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
from spanbreaker.adapters.langchain import ADAPTER
from spanbreaker.instrumentation import attach

from .conftest import run
from .scripted import build

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"
INSTRUMENTOR = "openinference-instrumentation-langchain"


class StartProbe(SpanProcessor):
    """Records each span's attributes as ``on_start`` sees them (runs before the breaker)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.at_start: dict[int, dict[str, Any]] = {}

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        with self.lock:
            self.at_start[span.context.span_id] = dict(span.attributes or {})


def _measure(setup: str) -> dict[str, str]:
    """The row's cells for ``setup``: ``stock`` (the instrumentor alone) or ``adapter`` (spanbreaker's)."""
    from openinference.instrumentation.langchain import LangChainInstrumentor

    spanbreaker.instrumentation.uninstrument()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    probe = StartProbe()
    provider.add_span_processor(probe)
    processor = attach(provider, spanbreaker.BreakerConfig())
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LangChainInstrumentor()
    if setup == "adapter":
        ADAPTER.instrument(provider, processor)
    else:
        instrumentor.instrument(tracer_provider=provider)
    try:
        graph, _ = build("react", "healthy")
        run(graph, "sync")
        spans = exporter.get_finished_spans()
        tools = [s for s in spans if (s.attributes or {}).get("openinference.span.kind") == "TOOL"]
        assert len(tools) == 3
        starts = [probe.at_start[s.context.span_id] for s in tools if s.context is not None]
        kind = all(a.get("openinference.span.kind") == "TOOL" for a in starts)
        arguments = all(a.get("input.value") == s.attributes["input.value"] for a, s in zip(starts, tools, strict=True))
        results = all(f"{q}: sunny, 20C" in str(s.attributes.get("output.value"))
                      for q, s in zip(("weather in Paris", "weather in Rome", "weather in Oslo"), tools, strict=True))
        envelope = all('"tool_call_id"' in str(s.attributes.get("output.value")) for s in tools)
        loop, calls = build("react", "loop")
        try:
            run(loop, "sync")
            stop = "no: nothing is vetoed"
        except spanbreaker.Tripped:
            stop = f"yes, after {calls.tools} tool calls"
        return {
            "kind at start": "yes" if kind else "no",
            "arguments at start": "yes" if arguments else "no",
            "results at end": ("yes, in a ToolMessage envelope with a per-call tool_call_id" if results and envelope
                               else "yes" if results else "no"),
            "stop reaches the caller": stop,
        }
    finally:
        if setup == "adapter":
            ADAPTER.uninstrument()
        elif instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()
        provider.shutdown()


def _doc_rows() -> dict[str, dict[str, str]]:
    """Rows of the conformance table naming this instrumentor, keyed by their setup cell."""
    lines = [line for line in DOC.read_text().splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[2:]:
        cells = dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")), strict=True))
        if cells["instrumentor"].startswith(INSTRUMENTOR):
            rows[cells["setup"]] = cells
    return rows


@pytest.mark.parametrize("setup", ["stock", "spanbreaker adapter"])
def test_conformance_row_matches_what_the_instrumentor_does(setup: str) -> None:
    row = _doc_rows().get(setup)
    assert row is not None, f"docs/conformance.md has no {INSTRUMENTOR} row for setup {setup!r}"
    documented = re.search(r"\d+\.\d+\.\d+", row["instrumentor"])
    assert documented is not None
    installed = version(INSTRUMENTOR)
    assert installed.split(".")[:2] == documented.group().split(".")[:2], \
        f"{INSTRUMENTOR} {installed} installed, the row was measured on {documented.group()}: measure it again"
    measured = _measure("adapter" if setup != "stock" else "stock")
    for cell, value in measured.items():
        assert row[cell] == value, f"{setup}: {cell!r} is now {value!r}, the docs say {row[cell]!r}"
