"""CrewAI scenarios: how early the breaker stops a looping crew, against CrewAI's own guard alone.

Each scenario runs a real one-agent crew with the real OpenInference CrewAI instrumentor in one of its modes
(wrapping CrewAI's methods, or listening to CrewAI's event bus) and spanbreaker's adapter, a scripted model
standing in for the LLM (``tests/crewai/scripted.py``). It runs twice on a fresh provider: in ``enforce`` mode (the
run stops at the trip) and in ``observe`` mode, where nothing is stopped and CrewAI's own guard (five identical
calls with one result) ends it. "Calls" are model turns plus tool executions actually made (a vetoed call never
runs). The healthy and wide cases are the look-alikes that must stay quiet. Runs in the CrewAI venv
(``make test-crewai`` builds it):

    .venv/crewai/bin/python benchmarks/crewai_scenarios.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._table import print_rows
from opentelemetry.sdk.trace import SpanLimits, TracerProvider

import spanbreaker
from spanbreaker.instrumentation import attach
from tests.crewai.conftest import instrument, uninstrument
from tests.crewai.scripted import MODES, build


def _once(case: str, mode: str, breaker_mode: str) -> tuple[str, str, int]:
    """(calls made as 'total (model+tool)', detector or what stopped it, trips) for one run."""
    from crewai.events import crewai_event_bus

    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    processor = attach(provider, spanbreaker.BreakerConfig(mode=breaker_mode))  # type: ignore[arg-type]
    instrument(provider, processor, mode)
    stopped = "-"
    try:
        crew, calls = build(case)
        try:
            crew.kickoff()
        except spanbreaker.Tripped as trip:
            stopped = trip.detector
        except Exception as exc:  # CrewAI's own guard
            stopped = type(exc).__name__
        crewai_event_bus.flush()
        return f"{calls.model + calls.tools} ({calls.model}+{calls.tools})", stopped, processor.stats.trips
    finally:
        uninstrument()
        provider.shutdown()


def main() -> None:
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for mode in MODES:
        enforced, detector, _ = _once("loop", mode, "enforce")
        alone, guard, _ = _once("loop", mode, "observe")
        healthy, _, healthy_trips = _once("healthy", mode, "enforce")
        wide, _, wide_trips = _once("wide", mode, "enforce")
        rows.append({"instrumentor mode": mode, "detector": detector, "calls to trip": enforced,
                     "CrewAI guard alone": f"{alone}, {guard}",
                     "healthy": f"{'quiet' if not healthy_trips else 'TRIPPED'}, {healthy} calls",
                     "wide": f"{'quiet' if not wide_trips else 'TRIPPED'}, {wide} calls"})
    print_rows(rows)
    print(f"\ncalls = model turns + tool executions made ({time.perf_counter() - started:.1f} s)")
    print(json.dumps({"scenarios": rows}))


if __name__ == "__main__":
    main()
