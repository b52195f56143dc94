"""The last line each launcher app prints: its summary as JSON, once the tracer provider has flushed."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry import trace


def report(summary: dict[str, Any]) -> None:
    provider = trace.get_tracer_provider()
    summary["provider"] = type(provider).__name__
    if hasattr(provider, "force_flush"):
        provider.force_flush()
    print(json.dumps(summary), flush=True)
