"""LangChain adapter (LangGraph included): the OpenInference LangChain instrumentor, its spans saying what they are
at start.

What this adapter fixes around (measured on langgraph 1.2 / langchain-core 1.7 / openinference-instrumentation-langchain
0.1.80):

* The instrumentor starts every span with no attributes at all and writes the kind, the tool name, the arguments
  and the token counts only when the run ends. A breaker decides at span start whether a call may run, so it
  saw only anonymous spans: a LangGraph agent looping on one tool ran to its recursion limit unseen. Here the
  instrumentor's tracer gets, at start, the attributes it would write at the end anyway and that are known
  then: ``openinference.span.kind`` (the instrumentor's own rule: ``agent`` in the run name, else the LangChain
  run type), and for tools ``tool.name`` and ``input.value`` (the call's arguments), for models and agents
  ``input.value``. Which values, from a LangChain run, is
  :func:`spanbreaker.conventions.langchain.start_attributes`; the exported span is what the instrumentor makes,
  the same keys overwritten with their end values. Reading the spans (the ``ToolMessage`` envelope around tool
  results included) is that convention's job, not this module's.
* The stop needs no variant: LangChain's callback manager catches ``Exception`` around handlers, and LangGraph's
  retry policies and ``ToolNode`` error handling catch ``Exception`` too, so the ``BaseException``
  :class:`spanbreaker.Tripped` raised from the tool or model span's start leaves ``invoke`` / ``ainvoke`` /
  ``stream`` / ``astream`` before the call runs.
* A run vetoed at start never ends, and the instrumentor would keep it in its run map for good: it is dropped.

Everything framework-specific stays in this module; LangChain is imported only when instrumenting. Plain LangChain
(a runnable, an ``AgentExecutor``) goes through the same instrumentor and the same hook.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from typing import Any

from ..conventions.langchain import start_attributes
from ..errors import Tripped, register_steer_unsupported
from .base import PatchLog, StartAttributes

logger = logging.getLogger("spanbreaker")

SCOPE = "openinference.instrumentation.langchain"
"""Instrumentation scope of the instrumentor's spans."""


# ----------------------------------------------------------------------------------------------- the hook
_pending = threading.local()
"""The start attributes of the run whose span is being started on this thread (set around ``_start_trace``)."""


def _start_trace(wrapped: Any, tracer: Any, args: Any, kwargs: Any) -> Any:
    """Around ``OpenInferenceTracer._start_trace(run)``: its span starts with the run's start attributes."""
    run = args[0] if args else kwargs.get("run")
    try:
        attributes = start_attributes(run.run_type, run.name, run.inputs, run.serialized)
        if not isinstance(tracer._tracer, StartAttributes):
            tracer._tracer = StartAttributes(tracer._tracer, _pending)
    except Exception:  # an odd run: the span starts as the instrumentor makes it
        logger.debug("spanbreaker could not read a LangChain run at start", exc_info=True)
        attributes = None
    _pending.attributes = attributes
    try:
        return wrapped(*args, **kwargs)
    except Tripped:
        tracer.run_map.pop(str(run.id), None)  # vetoed: it never ends, the instrumentor would keep it
        raise
    finally:
        _pending.attributes = None


class LangChainAdapter:
    """Named after the instrumentor's entry point (``langchain``), as every adapter is: naming it in
    ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` turns both off."""

    name = "langchain"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._instrumentor: Any = None
        self._owns_instrumentor = False
        self._patches = PatchLog()

    def available(self) -> bool:
        try:
            return (importlib.util.find_spec("langchain_core") is not None
                    and importlib.util.find_spec("openinference.instrumentation.langchain") is not None)
        except (ImportError, ValueError):
            return False

    def instrument(self, tracer_provider: Any, processor: Any = None) -> None:
        """Instrument LangChain for ``tracer_provider`` (whose span processors include the breaker), idempotent.

        When the instrumentor is already on (the application instrumented LangChain itself), it is left as it is
        and only the start hook is added.
        """
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from openinference.instrumentation.langchain._tracer import OpenInferenceTracer

        with self._lock:
            # The tracer's start hook runs inside LangChain's callback manager, which logs and swallows an
            # ordinary exception: a steer (spanbreaker.Steered) would not stop the call, so it stops hard.
            register_steer_unsupported(SCOPE)
            if not self._patches:
                self._patches.wrap(OpenInferenceTracer, "_start_trace", _start_trace)
            if self._instrumentor is not None:
                return
            instrumentor = LangChainInstrumentor()
            self._owns_instrumentor = not instrumentor.is_instrumented_by_opentelemetry
            if self._owns_instrumentor:
                instrumentor.instrument(tracer_provider=tracer_provider)
            self._instrumentor = instrumentor

    def uninstrument(self) -> None:
        with self._lock:
            self._patches.undo()
            if self._instrumentor is not None:
                if self._owns_instrumentor and self._instrumentor.is_instrumented_by_opentelemetry:
                    self._instrumentor.uninstrument()
                self._instrumentor = None
                self._owns_instrumentor = False


ADAPTER = LangChainAdapter()
