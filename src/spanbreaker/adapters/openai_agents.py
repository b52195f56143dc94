"""OpenAI Agents SDK adapter: the OpenInference instrumentor on the breaker's provider.

Why so little is needed (measured on openai-agents 0.20 with openinference-instrumentation-openai-agents 2.6;
the cells are pinned by ``tests/openai_agents/test_conformance.py``):

* The SDK calls its trace processors synchronously on the thread that runs the agent, and the instrumentor
  starts an OpenTelemetry span from each ``on_span_start``: a ``Tripped`` raised by the breaker's ``on_start``
  passes the SDK's tool and model wrappers (they catch ``Exception``) and comes out of ``Runner.run``,
  ``Runner.run_sync`` and handoffs alike, so no framework-specific exception variant is needed.
* A tool span carries its kind at start but its arguments and result only at its end (the instrumentor fills
  them from the SDK's ``FunctionSpanData`` when the span finishes). The breaker decides such a call when it
  ends and vetoes the next one (see ``docs/conformance.md``).
* Importing the SDK takes seconds: when the application has not imported it yet, instrumenting waits until it
  does (:mod:`._deferred`).
* The instrumentor is installed exclusively (the SDK's default exporter to OpenAI's tracing backend is
  displaced), as its ``instrument()`` does by default.
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Any

from ._deferred import Deferred, being_imported

SCOPE = "openinference.instrumentation.openai_agents"
"""Instrumentation scope of every span the instrumentor creates."""


class OpenAIAgentsAdapter:
    name = "openai_agents"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._instrumentor: Any = None
        self._deferred = Deferred("agents")

    def available(self) -> bool:
        try:
            return (importlib.util.find_spec("agents") is not None
                    and importlib.util.find_spec("openinference.instrumentation.openai_agents") is not None)
        except (ImportError, ValueError):
            return False

    def instrument(self, tracer_provider: Any, processor: Any) -> None:
        """Instrument the Agents SDK for ``tracer_provider`` (whose span processors include ``processor``), now
        or when the application imports it."""
        self._deferred.run_or_defer(lambda: self._instrument(tracer_provider))

    def _instrument(self, tracer_provider: Any) -> None:
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        with self._lock:
            instrumentor = OpenAIAgentsInstrumentor()
            if instrumentor.is_instrumented_by_opentelemetry:  # on another provider: move it to this one
                instrumentor.uninstrument()
            try:
                instrumentor.instrument(tracer_provider=tracer_provider)
            except ImportError:
                if being_imported(SCOPE):  # the launcher is loading this instrumentor right now (see being_imported)
                    return
                raise
            self._instrumentor = instrumentor

    def uninstrument(self) -> None:
        self._deferred.cancel()
        with self._lock:
            if self._instrumentor is not None and self._instrumentor.is_instrumented_by_opentelemetry:
                self._instrumentor.uninstrument()
            self._instrumentor = None


ADAPTER = OpenAIAgentsAdapter()
