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
* A function tool's call is shown to the breaker in process when it starts, and a steer is kept for the call the
  SDK would have run anyway (:mod:`._agents_sdk`, shared with OpenLLMetry's instrumentor): the fifth identical call
  is vetoed before it runs instead of the next model call, and with ``RunConfig(trace_include_sensitive_data=False)``
  (no input or output on the SDK's spans) loops are still caught. Nothing is added to the spans. On an SDK release
  whose internals differ, calls are read from the spans alone.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from typing import Any

from ._agents_sdk import TOOL_CALLS, keep_steer
from ._deferred import Deferred, being_imported
from .base import PatchLog

logger = logging.getLogger("spanbreaker")

SCOPE = "openinference.instrumentation.openai_agents"
"""Instrumentation scope of every span the instrumentor creates."""


def check_compatible() -> None:
    """Raise if the instrumentor installed is not one whose internals the patch was written for (the SDK's are
    checked where its patches are applied, :data:`~._agents_sdk.TOOL_CALLS`)."""
    from openinference.instrumentation.openai_agents._processor import OpenInferenceTracingProcessor

    if not callable(getattr(OpenInferenceTracingProcessor, "on_span_start", None)):
        raise RuntimeError("OpenInferenceTracingProcessor has no on_span_start")


class OpenAIAgentsAdapter:
    name = "openai_agents"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._instrumentor: Any = None
        self._deferred = Deferred("agents")
        self._patches = PatchLog()

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
            if not self._patches:
                self._patch()

    def _patch(self) -> None:
        try:
            check_compatible()
            TOOL_CALLS.hold(self.name, self._patches)
            from openinference.instrumentation.openai_agents._processor import OpenInferenceTracingProcessor

            self._patches.wrap(OpenInferenceTracingProcessor, "on_span_start", keep_steer)
        except Exception:  # another SDK release: calls are read from the spans alone
            self._patches.undo()
            logger.warning("spanbreaker could not show the OpenAI Agents SDK's tool calls to the breaker: they are "
                           "read from its spans alone (at their end, and not without sensitive data)", exc_info=True)

    def uninstrument(self) -> None:
        self._deferred.cancel()
        with self._lock:
            if self._instrumentor is not None and self._instrumentor.is_instrumented_by_opentelemetry:
                self._instrumentor.uninstrument()
            self._instrumentor = None
            self._patches.undo()


ADAPTER = OpenAIAgentsAdapter()
