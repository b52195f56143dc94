"""Agno adapter: the OpenInference Agno instrumentor on the breaker's provider, plus the stop path Agno honours.

Why this module exists:

* Agno absorbs every ``Exception`` into the returned ``RunOutput`` and hangs ``team.arun`` on a bare
  ``BaseException``. Its own ``RunCancelledException`` is the clean stop: agents and whole teams end
  CANCELLED in ``run``, ``arun`` and both streaming modes. So trips on Agno spans raise :class:`AgnoTripped`,
  which is both a ``RunCancelledException`` and a :class:`spanbreaker.Tripped`.
* The instrumentor only wraps ``Model`` subclasses it finds inside ``agno.models``; custom models (a company
  gateway, a scripted test model) get no LLM spans and so no breaker. They are wrapped here, lazily, on
  their first call. The same lazy path covers provider modules imported later, so the instrumentor is only
  shown the model classes already loaded: it would otherwise import every ``agno.models`` module and its
  provider SDK (seconds, and LiteLLM fetches a price list from the network at import).
* The instrumentor has defects that matter for stopping and for "nothing lost"; the work-arounds live in
  :mod:`spanbreaker.adapters._agno_patches` and never modify the instrumentor package itself.

What a caller sees: a run the breaker stopped returns its RunOutput with status CANCELLED and content
``spanbreaker tripped [detector] reason (trace ...)``; :func:`trip_record` leads from it to the record. A run
whose trace was already tripped before it started (the application retries inside one span of its own) has
no RunOutput to return: it raises :class:`AgnoTripped`, which ``except spanbreaker.Tripped`` catches.

Agno's ``setup_tracing`` uses the same instrumentor on its own global provider. When it came first, the
breaker attaches to that provider (``spanbreaker.instrument()`` with no argument does this) and the
instrumentor is left as it is.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections import OrderedDict
from typing import Any

from ..breaker import TripRecord
from ..errors import Steered, Tripped, register_steer_exception, register_trip_exception
from ..processor import BreakerSpanProcessor

logger = logging.getLogger("spanbreaker")

SCOPE = "openinference.instrumentation.agno"
"""Instrumentation scope of every span the Agno instrumentor (and this adapter) creates."""
MIN_SPAN_ATTRIBUTES = 1024
"""Agno LLM spans flatten every message into attributes; under the SDK default of 128 the span kind and
``input.value`` are evicted before ``on_start`` sees them (defect B4). Agno's own ``setup_tracing`` uses 1024."""
_MAX_RUNS = 4096


def _make_trip_exception() -> type[Tripped]:
    from agno.exceptions import RunCancelledException

    class AgnoTripped(RunCancelledException, Tripped):
        """A trip on an Agno span: Agno ends the run (and its team) CANCELLED; ``except Tripped`` still works."""

        def __init__(self, detector: str, reason: str, trace_id: str, evidence: Any = None,
                     blocked: bool = False) -> None:
            Tripped.__init__(self, detector, reason, trace_id, evidence, blocked)
            self.type = "run_cancelled_error"
            self.error_id = "run_cancelled_error"

    AgnoTripped.__module__ = __name__
    AgnoTripped.__qualname__ = "AgnoTripped"
    return AgnoTripped


def _make_steer_exception() -> type[Steered]:
    from agno.exceptions import RetryAgentRun

    class AgnoSteered(Steered, RetryAgentRun):
        """A steer on an Agno tool span. Agno re-raises any other exception out of ``FunctionCall.execute``
        (the run fails); an ``AgentRunException`` is its tool-error path to the model: the call is recorded
        as failed and ``user_message`` joins the next prompt. ``RetryAgentRun`` does not stop the run."""

        def __init__(self, detector: str, reason: str, trace_id: str, evidence: Any = None) -> None:
            Steered.__init__(self, detector, reason, trace_id, evidence)  # also AgentRunException's, via super()
            self.user_message = str(self)
            self.error_id = "retry_agent_run_error"

    AgnoSteered.__module__ = __name__
    AgnoSteered.__qualname__ = "AgnoSteered"
    return AgnoSteered


class _RunIndex:
    """run_id -> trace id of the run's AGENT span, so a RunOutput leads to its trip record (bounded LRU)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._traces: OrderedDict[str, int] = OrderedDict()

    def add(self, run_id: str, trace_id: int) -> None:
        with self._lock:
            self._traces[run_id] = trace_id
            self._traces.move_to_end(run_id)
            if len(self._traces) > _MAX_RUNS:
                self._traces.popitem(last=False)

    def get(self, run_id: str) -> int | None:
        with self._lock:
            return self._traces.get(run_id)


class AgnoAdapter:
    """``spanbreaker.instrument()`` drives this through :data:`ADAPTER`."""

    name = "agno"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._instrumentor: Any = None
        self._owns_instrumentor = False
        self._patches: Any = None
        self.processor: BreakerSpanProcessor | None = None
        self.runs = _RunIndex()
        self.trip_exception: type[Tripped] | None = None
        self.steer_exception: type[Steered] | None = None

    def available(self) -> bool:
        return (importlib.util.find_spec("agno") is not None
                and importlib.util.find_spec("openinference.instrumentation.agno") is not None)

    def instrument(self, tracer_provider: Any, processor: BreakerSpanProcessor) -> None:
        from openinference.instrumentation.agno import AgnoInstrumentor

        from ._agno_patches import Patches, RaisedLimitsProvider, loaded_models_only, same_pipeline

        with self._lock:
            if self._patches is not None:
                if self.processor is processor:
                    return
                # The instrumentor is a process-wide singleton: it can feed one provider. Follow the newest.
                self.uninstrument()
            if self.trip_exception is None:
                self.trip_exception = _make_trip_exception()
            register_trip_exception(SCOPE, self.trip_exception)
            if self.steer_exception is None:
                self.steer_exception = _make_steer_exception()
            register_steer_exception(SCOPE, self.steer_exception)
            instrumentor = AgnoInstrumentor()
            if instrumentor.is_instrumented_by_opentelemetry:
                # Agno's setup_tracing (or the application) instrumented first: keep its provider. If that is
                # not the provider the breaker is on, feed the breaker from the instrumentor's pipeline too.
                self._owns_instrumentor = False
                tracer = getattr(instrumentor._tracer, "__wrapped__", None)
                if tracer is not None and not same_pipeline(tracer, tracer_provider):
                    pipeline = getattr(tracer, "_active_span_processor", None)
                    if pipeline is not None and hasattr(pipeline, "add_span_processor"):
                        pipeline.add_span_processor(processor)
            else:
                with loaded_models_only():
                    instrumentor.instrument(
                        tracer_provider=RaisedLimitsProvider(tracer_provider, MIN_SPAN_ATTRIBUTES))
                self._owns_instrumentor = True
            self._instrumentor = instrumentor
            self.processor = processor
            self._patches = Patches(instrumentor._tracer, processor, self.runs, self.trip_exception)
            self._patches.apply()

    def uninstrument(self) -> None:
        with self._lock:
            if self._patches is not None:
                self._patches.remove()  # before the instrumentor: our wrappers sit on top of its wrappers
                self._patches = None
            if self._instrumentor is not None and self._owns_instrumentor:
                self._instrumentor.uninstrument()
            self._instrumentor = None
            self._owns_instrumentor = False
            self.processor = None


ADAPTER = AgnoAdapter()


def trace_id_of(run_output: Any) -> str | None:
    """The trace id (32 hex digits) of an Agno ``RunOutput`` / ``TeamRunOutput``, if the run was traced here."""
    run_id = getattr(run_output, "run_id", None)
    if not isinstance(run_id, str):
        return None
    trace_id = ADAPTER.runs.get(run_id)
    return f"{trace_id:032x}" if trace_id is not None else None


def trip_record(run_output: Any, processor: BreakerSpanProcessor | None = None) -> TripRecord | None:
    """The breaker's record (detector, reason, evidence) for the run that produced ``run_output``, or None."""
    processor = processor or ADAPTER.processor
    trace_id = trace_id_of(run_output)
    if processor is None or trace_id is None:
        return None
    return processor.trip_record(trace_id)


__all__ = ["ADAPTER", "MIN_SPAN_ATTRIBUTES", "SCOPE", "AgnoAdapter", "trace_id_of", "trip_record"]
