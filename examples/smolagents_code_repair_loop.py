"""The README demo: a smolagents CodeAgent stuck in a code-repair loop, stopped by spanbreaker.

The model (scripted, offline) keeps writing code that fails with the same root exception, a ``KeyError``,
each time guessing another key. Without a breaker the agent would spend all of ``max_steps`` model calls;
spanbreaker's ``error_loop`` detector trips after a few identical failures and the next model call is
refused before it is made. The spans, exported by a real OpenTelemetry exporter, show where it happened.

Run: ``python examples/smolagents_code_repair_loop.py`` (exit code 0 when the run was tripped as expected).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _scripted import ScriptedModel, code_reply, global_tracing, print_trip

import spanbreaker

MAX_STEPS = 20
GUESSES = ["total", "sum", "amount", "value", "grand_total", "revenue", "count", "price"]


def build_model() -> ScriptedModel:
    """Every step reads the quarterly figures with a key that is not there: KeyError, step after step."""
    return ScriptedModel([
        code_reply(f'report = {{"q1": 120, "q2": 135}}\nprint(report["{key}"])',
                   thought=f"The total must be under '{key}'.")
        for key in GUESSES
    ])


def main() -> int:
    exporter, processor = global_tracing()  # spanbreaker.instrument() on the global provider

    from smolagents import CodeAgent
    from smolagents.monitoring import LogLevel

    model = build_model()
    agent = CodeAgent(tools=[], model=model, max_steps=MAX_STEPS, verbosity_level=LogLevel.OFF)
    try:
        agent.run("What was the total revenue over the first two quarters?")
    except spanbreaker.Tripped as trip:
        print_trip(trip, processor, exporter.get_finished_spans(), model.calls, MAX_STEPS)
        return 0 if trip.detector == "error_loop" else 1
    print(f"unexpected: the run finished without a trip after {model.calls} model calls")
    return 1


if __name__ == "__main__":
    sys.exit(main())
