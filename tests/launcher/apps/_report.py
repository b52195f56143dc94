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


def note_stop(summary: dict[str, Any], exc: BaseException) -> None:
    """What stopped the run, into the summary; Ctrl-C and exit pass through. The apps catch BaseException: the
    breaker's stop is one, and it must not look like a crash."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        raise exc
    summary.update(outcome="stopped", exception=type(exc).__name__, detector=getattr(exc, "detector", None))
