"""One warning when the breaker sees an agent framework's spans that spanbreaker itself did not instrument.

Why: ``provider.add_span_processor(BreakerSpanProcessor())`` next to a stock OpenInference instrumentor looks
complete but is not. The breaker sees the spans and trips, yet the stop path and the repairs live in the
framework adapters: without them a smolagents run loses its agent span on a trip and custom ``Model`` calls go
untraced (so unguarded), an Agno team hangs or swallows the trip, and BeeAI's stock spans arrive only after the
run has finished. The processor cannot fix that from a span, but it can say, once, which step is missing.

Called with the spans of each verdict (a warning approaching a threshold, a trip: rare), never on the per-span
path, which costs every span the application makes. Replayed spans (``spanbreaker replay``) carry the same scopes
without any instrumentor running: only live spans, while the framework's stock instrumentor is on, are worth a
warning.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterable
from typing import Any

logger = logging.getLogger("spanbreaker")

FRAMEWORK_SCOPES = {
    "openinference.instrumentation.smolagents": "smolagents",
    "openinference.instrumentation.agno": "agno",
    "openinference.instrumentation.beeai": "beeai",
}
"""Instrumentation scope of a framework's spans -> the spanbreaker adapter that must be on for them."""
_STOCK = {"smolagents": "SmolagentsInstrumentor", "agno": "AgnoInstrumentor", "beeai": "BeeAIInstrumentor"}
"""The stock OpenInference instrumentor class of each framework (in the scope's module)."""

instrumented: set[str] = set()
"""Adapter names :mod:`spanbreaker.instrumentation` has instrumented (it keeps this up to date)."""

_warned: set[str] = set()
_lock = threading.Lock()


def check_spans(spans: Iterable[Any]) -> None:
    """Warn once per framework when one of ``spans`` comes from a framework whose adapter is not instrumented."""
    for span in spans:
        scope = getattr(getattr(span, "instrumentation_scope", None), "name", None)
        if isinstance(scope, str) and scope in FRAMEWORK_SCOPES:
            _check(scope, FRAMEWORK_SCOPES[scope])


def _check(scope: str, framework: str) -> None:
    if framework in instrumented or framework in _warned or not _stock_on(scope, framework):
        return
    with _lock:
        if framework in _warned:
            return
        _warned.add(framework)
    logger.warning(
        "spanbreaker sees %s spans, but spanbreaker.instrument() has not instrumented %s: trips cannot stop it "
        "cleanly and part of the trace goes missing. Call spanbreaker.instrument(provider) (it attaches the "
        "breaker and instruments the framework) instead of adding BreakerSpanProcessor by hand.",
        framework, framework)


def _stock_on(scope: str, framework: str) -> bool:
    """Whether the stock instrumentor is on in this process: the spans are live, not replayed from a file."""
    module = sys.modules.get(scope)
    instance = getattr(getattr(module, _STOCK[framework], None), "_instance", None)
    return bool(getattr(instance, "is_instrumented_by_opentelemetry", False))
