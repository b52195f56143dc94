"""BeeAI framework adapter: live OpenInference spans, so a trip stops ReAct, ToolCalling and Requirement agents.

What this adapter fixes around (measured on beeai-framework 0.1.85 and openinference-instrumentation-beeai):

* The stock ``BeeAIInstrumentor`` creates every span of a run after the root run has finished, so a breaker
  could never veto a call. :mod:`._beeai_live` emits the same spans live; the stock instrumentor is switched
  off if it was on (both would export every span twice, and the stock one would raise a trip out of a run
  that already completed).
* No Tripped variant is needed: BeeAI's retries (``max_retries_per_step``, ``total_max_retries``, a tool's
  ``retry_options``) and error wrapping (``FrameworkError.ensure``, ``ToolError``, ``AgentError``) all catch
  ``Exception``, so a ``BaseException`` is never retried nor fed back to the model. Its emitter's TaskGroups
  wrap it in a ``BaseExceptionGroup``; :mod:`._beeai_stop` unwraps that at every run boundary, so the caller
  of ``await agent.run(...)`` gets ``spanbreaker.Tripped``. The tests in ``tests/beeai`` prove this for each
  agent class and for nested agents.
"""

from __future__ import annotations

import importlib.util
import logging
from typing import Any

logger = logging.getLogger("spanbreaker")


class BeeAIAdapter:
    name = "beeai"

    def __init__(self) -> None:
        self._instrumentor: Any = None
        self._claimed = False

    def available(self) -> bool:
        try:
            return (importlib.util.find_spec("beeai_framework") is not None
                    and importlib.util.find_spec("openinference.instrumentation.beeai") is not None)
        except (ImportError, ValueError):
            return False

    def instrument(self, tracer_provider: Any, processor: Any) -> None:
        """Instrument BeeAI on ``tracer_provider`` (whose span processors include ``processor``)."""
        from openinference.instrumentation.beeai import BeeAIInstrumentor

        from . import _beeai_stop
        from ._beeai_live import SCOPE, LiveBeeAIInstrumentor

        # The instance, not the constructor: BeeAIInstrumentor() re-runs __init__ on the singleton, which drops its
        # emitter cleanup so that uninstrument() could no longer detach it.
        stock = getattr(BeeAIInstrumentor, "_instance", None)
        if stock is not None and stock.is_instrumented_by_opentelemetry and not self._claimed:
            logger.warning("spanbreaker replaces the OpenInference BeeAIInstrumentor with live spans "
                           "(it emits spans only after a run has finished)")
            stock.uninstrument()
        self._claim_stock(BeeAIInstrumentor)
        live = LiveBeeAIInstrumentor()
        if live.is_instrumented_by_opentelemetry:  # on another provider: move it to this one
            live.uninstrument()
        live.instrument(tracer_provider=tracer_provider)
        _beeai_stop.install(SCOPE)
        self._instrumentor = live

    def _claim_stock(self, stock_type: Any) -> None:
        """Mark the (not instrumented) stock singleton as instrumented, so that a later ``instrument()`` of it is a
        no-op. ``opentelemetry-instrument`` loads every ``opentelemetry_instrumentor`` entry point, BeeAI's included,
        *after* spanbreaker's pre-instrument hook; without the claim both would emit every span."""
        if self._claimed:
            return
        stock = stock_type()  # safe: not instrumented now, so re-running its __init__ loses nothing
        stock._is_instrumented_by_opentelemetry = True
        self._claimed = True

    def _release_stock(self) -> None:
        if not self._claimed:
            return
        from openinference.instrumentation.beeai import BeeAIInstrumentor

        stock = getattr(BeeAIInstrumentor, "_instance", None)
        if stock is not None:
            stock._is_instrumented_by_opentelemetry = False
        self._claimed = False

    def uninstrument(self) -> None:
        from . import _beeai_stop

        _beeai_stop.uninstall()
        self._release_stock()
        if self._instrumentor is not None and self._instrumentor.is_instrumented_by_opentelemetry:
            self._instrumentor.uninstrument()
        self._instrumentor = None


ADAPTER = BeeAIAdapter()
