"""An application with its own tracing stack, as the README's "Already have a tracing stack?" describes.

    python existing_stack.py instrument   # the stock OpenInference instrumentor, then spanbreaker.instrument(provider)
    python existing_stack.py processor    # the stock instrumentor and a BreakerSpanProcessor added by hand

The agent is ``examples/launcher_app.py``'s looping ToolCallingAgent with its custom (scripted) Model. One JSON
line reports what the stack's own exporter received.
"""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path
from typing import Any

from openinference.instrumentation.smolagents import SmolagentsInstrumentor
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "launcher_app.py"


def main(mode: str) -> int:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    SmolagentsInstrumentor().instrument(tracer_provider=provider)
    if mode == "instrument":
        spanbreaker.instrument(provider)
    elif mode == "processor":
        provider.add_span_processor(spanbreaker.BreakerSpanProcessor())
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    runpy.run_path(str(EXAMPLE), run_name="launcher_app")["main"]()
    spans = exporter.get_finished_spans()
    kinds = [(s.attributes or {}).get("openinference.span.kind") for s in spans]
    report: dict[str, Any] = {
        "stack": mode,
        "agent_spans": [s.name for s in spans if (s.attributes or {}).get("openinference.span.kind") == "AGENT"],
        "llm_spans": kinds.count("LLM"),
        "tool_spans": kinds.count("TOOL"),
        "agent_tripped": any((s.attributes or {}).get("spanbreaker.tripped") is True
                             and (s.attributes or {}).get("openinference.span.kind") == "AGENT" for s in spans),
    }
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
