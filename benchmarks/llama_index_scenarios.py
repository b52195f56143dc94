"""LlamaIndex scenarios: how early the breaker stops a looping ``FunctionAgent``, against ``max_iterations`` alone.

Each scenario runs a real LlamaIndex ``FunctionAgent`` with the real OpenInference LlamaIndex instrumentor and
spanbreaker's adapter, a scripted model standing in for the LLM (``tests/llama_index/scripted.py``), awaited or
with its events streamed, its model streaming or not. It runs twice on a fresh provider: in ``enforce`` mode
(the run stops at the trip) and in ``observe`` mode, where nothing is stopped and the run goes on until
``max_iterations`` ends it. "Calls" are model turns plus tool executions actually made (a vetoed call never
runs). The healthy and wide cases are the look-alikes that must stay quiet.

    python benchmarks/llama_index_scenarios.py
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
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from workflows.errors import WorkflowRuntimeError

import spanbreaker
from spanbreaker.adapters.llama_index import ADAPTER
from spanbreaker.instrumentation import attach
from tests.llama_index.scripted import MAX_ITERATIONS, MODELS, MODES, build, build_handoff, build_react, run

AGENTS = {"ReActAgent": build_react, "AgentWorkflow (handoff, then the loop)": build_handoff}
"""The other agents, each looping on one search: a loop row each, awaited."""


def _once(case: str, mode: str, model: str, breaker_mode: str) -> tuple[str, str, int]:
    """(calls made as 'total (model+tool)', detector or '-', trips) for one run; ``case`` is a script of
    ``FunctionAgent`` or one of :data:`AGENTS`."""
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    processor = attach(provider, spanbreaker.BreakerConfig(mode=breaker_mode))  # type: ignore[arg-type]
    ADAPTER.instrument(provider, processor)
    detector = "-"
    try:
        agent, calls = AGENTS[case]() if case in AGENTS else build(case, model)
        try:
            with contextlib.suppress(WorkflowRuntimeError):  # max_iterations
                run(agent, mode)
        except spanbreaker.Tripped as trip:
            detector = trip.detector
        return f"{calls.model + calls.tools} ({calls.model}+{calls.tools})", detector, processor.stats.trips
    finally:
        ADAPTER.uninstrument()
        provider.shutdown()


def main() -> None:
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for mode in MODES:
        for model in MODELS:
            enforced, detector, _ = _once("loop", mode, model, "enforce")
            alone, _, _ = _once("loop", mode, model, "observe")
            healthy, _, healthy_trips = _once("healthy", mode, model, "enforce")
            wide, _, wide_trips = _once("wide", mode, model, "enforce")
            rows.append({"run": mode, "model call": model, "detector": detector, "calls to trip": enforced,
                         "max_iterations alone": alone,
                         "healthy": f"{'quiet' if not healthy_trips else 'TRIPPED'}, {healthy} calls",
                         "wide": f"{'quiet' if not wide_trips else 'TRIPPED'}, {wide} calls"})
    print_rows(rows)
    others = []
    for name in AGENTS:
        enforced, detector, _ = _once(name, "await", "chat", "enforce")
        alone, _, _ = _once(name, "await", "chat", "observe")
        others.append({"agent": name, "detector": detector, "calls to trip": enforced, "max_iterations alone": alone})
    print()
    print_rows(others)
    print(f"\ncalls = model turns + tool executions made; max_iterations={MAX_ITERATIONS} "
          f"({time.perf_counter() - started:.1f} s)")
    print(json.dumps({"scenarios": rows, "other agents": others}))


if __name__ == "__main__":
    main()
