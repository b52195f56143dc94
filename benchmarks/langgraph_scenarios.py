"""LangGraph scenarios: how early the breaker stops a looping agent, against LangGraph's recursion limit alone.

Each scenario runs a real LangGraph graph (the prebuilt ReAct agent, or a hand-built ``StateGraph`` with a
``ToolNode``) with the real OpenInference LangChain instrumentor and spanbreaker's adapter, a scripted model
standing in for the LLM (``tests/langgraph/scripted.py``), in each run mode. It runs twice on a fresh provider:
in ``enforce`` mode (the run stops at the trip) and in ``observe`` mode, where nothing is stopped and the run
goes on until LangGraph's recursion limit ends it. "Calls" are model turns plus tool executions actually made (a
vetoed call never runs). The healthy and wide cases are the look-alikes that must stay quiet.

    python benchmarks/langgraph_scenarios.py
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._table import print_rows
from langgraph.errors import GraphRecursionError
from opentelemetry.sdk.trace import SpanLimits, TracerProvider

import spanbreaker
from spanbreaker.adapters.langchain import ADAPTER
from spanbreaker.instrumentation import attach
from tests.langgraph.conftest import MODES, run
from tests.langgraph.scripted import AGENTS, RECURSION_LIMIT, build


def _once(agent: str, case: str, mode: str, breaker_mode: str) -> tuple[int, str, int]:
    """(calls made, detector or '-', trips) for one run."""
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    processor = attach(provider, spanbreaker.BreakerConfig(mode=breaker_mode))  # type: ignore[arg-type]
    ADAPTER.instrument(provider, processor)
    detector = "-"
    try:
        graph, calls = build(agent, case)
        try:
            with contextlib.suppress(GraphRecursionError):
                run(graph, mode)
        except spanbreaker.Tripped as trip:
            detector = trip.detector
        return calls.model + calls.tools, detector, processor.stats.trips
    finally:
        ADAPTER.uninstrument()
        provider.shutdown()


def main() -> None:
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for agent in sorted(AGENTS):
        for mode in MODES:
            enforced, detector, _ = _once(agent, "loop", mode, "enforce")
            alone, _, _ = _once(agent, "loop", mode, "observe")
            healthy, _, healthy_trips = _once(agent, "healthy", mode, "enforce")
            wide, _, wide_trips = _once(agent, "wide", mode, "enforce")
            rows.append({"agent": agent, "mode": mode, "detector": detector, "calls to trip": enforced,
                         "recursion limit alone": alone, "saved": alone - enforced,
                         "healthy": f"{'quiet' if not healthy_trips else 'TRIPPED'}, {healthy} calls",
                         "wide": f"{'quiet' if not wide_trips else 'TRIPPED'}, {wide} calls"})
    print_rows(rows)
    print(f"\ncalls = model turns + tool executions made; recursion_limit={RECURSION_LIMIT} "
          f"({time.perf_counter() - started:.1f} s)")
    print(json.dumps({"scenarios": rows}))


if __name__ == "__main__":
    main()
