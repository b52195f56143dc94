"""The README demo: a smolagents CodeAgent stuck in a code-repair loop, stopped by spanbreaker.

The model (scripted, offline) keeps writing code that fails with the same root exception, a ``KeyError``,
each time guessing another key. Without a breaker the agent would spend all of ``max_steps`` model calls;
spanbreaker's ``error_loop`` detector trips after a few identical failures and the next model call is
refused before it is made. The spans, exported by a real OpenTelemetry exporter, show where it happened.

Run: ``python examples/smolagents_code_repair_loop.py`` (exit code 0 when the run was tripped as expected).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _scripted import ScriptedModel, code_reply

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


def print_tree(spans: Sequence[ReadableSpan]) -> None:
    """The exported spans as a tree, with status and the trip attributes where they are set."""
    children: dict[int | None, list[ReadableSpan]] = {}
    ids = {s.context.span_id for s in spans if s.context is not None}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        parent = span.parent.span_id if span.parent is not None and span.parent.span_id in ids else None
        children.setdefault(parent, []).append(span)

    def show(span: ReadableSpan, depth: int) -> None:
        attributes = span.attributes or {}
        status = span.status.status_code.name
        marks = ""
        if attributes.get("spanbreaker.tripped"):
            marks = f"  spanbreaker.detector={attributes.get('spanbreaker.detector')}"
            if attributes.get("spanbreaker.blocked"):
                marks += " spanbreaker.blocked=true"
        print(f"  {'  ' * depth}{span.name:<{34 - 2 * depth}} {status:<5}{marks}")
        for child in children.get(span.context.span_id if span.context else None, []):
            show(child, depth + 1)

    for root in children.get(None, []):
        show(root, 0)


def main() -> int:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    # Attach the breaker to the global provider and instrument smolagents (the other frameworks are not used here).
    processor = spanbreaker.instrument(frameworks=["smolagents"])
    assert processor is not None

    from smolagents.monitoring import LogLevel

    from smolagents import CodeAgent

    model = build_model()
    agent = CodeAgent(tools=[], model=model, max_steps=MAX_STEPS, verbosity_level=LogLevel.OFF)
    try:
        agent.run("What was the total revenue over the first two quarters?")
    except spanbreaker.Tripped as trip:
        provider.force_flush()
        spans = exporter.get_finished_spans()
        marked = [s for s in spans if (s.attributes or {}).get("spanbreaker.tripped")]
        record = processor.trip_record(trip.trace_id)
        print("spanbreaker stopped the agent.")
        print(f"  detector : {trip.detector}")
        print(f"  reason   : {trip.reason}")
        print(f"  step     : {record.step if record else '?'} (the next model call was refused before it was made)")
        print(f"  model calls made: {model.calls}; max_steps alone would have allowed {MAX_STEPS + 1}")
        print(f"  spans exported: {len(spans)}, {len(marked)} with trip attributes, "
              f"{sum(1 for s in spans if s.status.status_code is StatusCode.ERROR)} with status ERROR")
        print("span tree (InMemorySpanExporter):")
        print_tree(spans)
        return 0 if trip.detector == "error_loop" else 1
    print(f"unexpected: the run finished without a trip after {model.calls} model calls")
    return 1


if __name__ == "__main__":
    sys.exit(main())
