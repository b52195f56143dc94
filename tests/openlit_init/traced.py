"""What the OpenLIT tier's framework apps share: ``openlit.init()`` with the breaker attached, the spans kept in memory,
and the summary each app prints of them."""

from __future__ import annotations

import os
from typing import Any

OPENLIT_ADAPTERS = ("openlit_openai", "openlit_anthropic", "openlit_groq", "openlit_ollama", "openlit_google_genai")
"""spanbreaker's adapters for OpenLIT's instrumentation: with only these, OpenLIT traces the framework alone."""


def start(openinference: bool = False) -> Any:
    """``openlit.init()`` (the global provider; nothing exported, no metrics or events), an in-memory exporter on that
    provider, then ``spanbreaker.instrument()``: returns the exporter. With ``openinference``, every adapter of an
    installed framework, so OpenInference's instrumentors trace the framework too (what ``spanbreaker.instrument()``
    does in an application that has both); else only OpenLIT's."""
    os.environ["OTEL_TRACES_EXPORTER"] = "none"  # OpenLIT's default would print every span to stdout
    import openlit
    from opentelemetry import trace
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    import spanbreaker

    openlit.init(application_name="research", disable_batch=True, disable_metrics=True, disable_events=True)
    provider: Any = trace.get_tracer_provider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spanbreaker.instrument(frameworks=None if openinference else OPENLIT_ADAPTERS)
    return exporter


def summary_of(spans: Any) -> dict[str, Any]:
    """Whether every span was exported once, how many carry the trip, which were blocked, and whether a span is still
    attached to this thread's context."""
    from opentelemetry import trace

    return {"spans": len(spans), "unique": len({s.context.span_id for s in spans}) == len(spans),
            "tripped": sum(1 for s in spans if (s.attributes or {}).get("spanbreaker.tripped")),
            "blocked": [s.name for s in spans if (s.attributes or {}).get("spanbreaker.blocked")],
            "current": trace.get_current_span().get_span_context().is_valid}
