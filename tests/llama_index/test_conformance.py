"""The LlamaIndex rows of docs/conformance.md, measured: what the instrumentor's spans carry at start and at end,
and whether a trip reaches the caller, with the stock instrumentor and with spanbreaker's adapter.

Each cell is measured here on a real ``FunctionAgent`` and compared with the row in the docs, so an instrumentor
upgrade that changes one (kind or arguments at start, results at end, the stop) fails loudly.
"""

from __future__ import annotations

import threading
from importlib.metadata import version
from typing import Any

import pytest
from opentelemetry.sdk.trace import Span, SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from workflows.errors import WorkflowRuntimeError

import spanbreaker
from spanbreaker.adapters.llama_index import ADAPTER
from spanbreaker.instrumentation import attach

from ..genai_rig import assert_documented, conformance_row, yes_no
from .scripted import HEALTHY_QUERIES, build, run


class StartProbe(SpanProcessor):
    """Records each span's attributes as ``on_start`` sees them (runs before the breaker)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.at_start: dict[int, dict[str, Any]] = {}

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        with self.lock:
            self.at_start[span.context.span_id] = dict(span.attributes or {})


def _measure(setup: str) -> tuple[str, str, str, str]:
    """The row's four cells for ``setup``: ``stock`` (the instrumentor alone) or ``adapter`` (spanbreaker's)."""
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    spanbreaker.instrumentation.uninstrument()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    probe = StartProbe()
    provider.add_span_processor(probe)
    processor = attach(provider, spanbreaker.BreakerConfig())
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LlamaIndexInstrumentor()
    if setup == "adapter":
        ADAPTER.instrument(provider, processor)
    else:
        instrumentor.instrument(tracer_provider=provider)
    try:
        agent, _ = build("healthy")
        run(agent)
        tools = [s for s in exporter.get_finished_spans() if s.name == "FunctionTool.acall"]
        assert len(tools) == len(HEALTHY_QUERIES)
        starts = [probe.at_start[s.context.span_id] for s in tools if s.context is not None]
        kind = all(a.get("openinference.span.kind") == "TOOL" for a in starts)
        arguments = all(a.get("input.value") == s.attributes["input.value"] for a, s in zip(starts, tools, strict=True))
        results = all(f"{q}: sunny, 20C" in str(s.attributes.get("output.value"))
                      for q, s in zip(HEALTHY_QUERIES, tools, strict=True))
        envelope = all('"raw_input"' in str(s.attributes.get("output.value")) for s in tools)
        looping, calls = build("loop", "stream")
        try:
            run(looping, "stream_events")
            stop = "no: nothing is vetoed"
        except spanbreaker.Tripped:
            stop = f"yes, after {calls.tools} tool calls"
        except WorkflowRuntimeError:
            stop = "no: nothing is vetoed" if processor.stats.trips == 0 else "no: the trip is swallowed"
        return (yes_no(kind), yes_no(arguments),
                "yes, in a ToolOutput envelope with the call's arguments" if results and envelope
                else yes_no(results), stop)
    finally:
        if setup == "adapter":
            ADAPTER.uninstrument()
        elif instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()
        provider.shutdown()


@pytest.mark.parametrize("setup", ["stock", "spanbreaker adapter"])
def test_conformance_row_matches_what_the_instrumentor_does(setup: str) -> None:
    cells = _measure("adapter" if setup != "stock" else "stock")
    row = conformance_row(
        f"LlamaIndex {version('llama-index-core')} (`FunctionAgent`; awaited or `stream_events`)",
        f"openinference-instrumentation-llama-index {version('openinference-instrumentation-llama-index')}",
        setup, cells)
    assert_documented(row)
