"""How a trip gets out of a LlamaIndex workflow, whichever instrumentor's span handler met it.

LlamaIndex's dispatcher calls each span handler inside ``except BaseException: pass``: the
:class:`spanbreaker.Tripped` the breaker raises from a span's start would be swallowed and the call would run anyway
(a trip recorded, the run going on). An adapter's wrapper around its handler's ``new_span`` keeps the trip aside
(:func:`keep_stop`), and the dispatcher's ``span_enter``, which the ``@dispatcher.span`` decorator calls before the
decorated method runs and outside any handler, raises it once every handler has seen the span start. So the vetoed
tool or model call never runs, and the trip (a ``BaseException``) passes ``FunctionAgent``'s ``except Exception``
around tools, and at the edge of the workflow step becomes :class:`LlamaIndexTripped`, which comes out of
``await agent.run(...)``. A steer (:class:`spanbreaker.Steered`, an ``Exception``) takes the same way out and becomes
the tool's error output, which the model reads.

OpenInference's adapter (:mod:`.llama_index`) and OpenLLMetry's (:mod:`.openllmetry_llama_index`) hold these patches
(:data:`STOP`), applied once while either is instrumented.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from ..errors import Steered, Tripped
from .base import PatchLog, SharedPatches

_local = threading.local()
"""Per thread: ``stopped``, the trip (or steer) a span handler's start raised, until the dispatcher raises it."""


def keep_stop(stop: Tripped | Steered) -> None:
    """Keep the trip a span handler's start raised (the dispatcher swallows it there) for :func:`_span_enter`."""
    _local.stopped = stop


def _span_enter(wrapped: Any, dispatcher: Any, args: Any, kwargs: Any) -> Any:
    """Around ``Dispatcher.span_enter``: after every handler saw the span start, raise the trip one of them hit."""
    _local.stopped = None
    wrapped(*args, **kwargs)
    stop = getattr(_local, "stopped", None)
    if stop is not None:
        _local.stopped = None
        from llama_index.core.instrumentation.span import active_span_id

        active_span_id.set(kwargs.get("parent_id"))  # the decorator set it to the vetoed span, and resets it only
        raise stop  # once the method ran: later spans nest under the parent, not under a span that never started


class LlamaIndexTripped(Tripped, Exception):
    """The trip as it leaves a workflow step: also an ``Exception``, so the workflow fails the run with it.

    Inside a step the trip is the plain :class:`~spanbreaker.Tripped` (a ``BaseException``), so
    ``FunctionAgent``'s ``except Exception`` around tool calls cannot turn it into a tool error the model reads.
    A ``BaseException`` leaving the step, though, escapes the workflow's step runner (it catches ``Exception``)
    and kills its control loop without ending the event stream: ``await handler`` raises, but
    ``handler.stream_events()`` waits forever. So at the step's edge the trip becomes this variant, and the
    workflow does what it does with any failed step: it ends the stream and fails the run, and ``await handler``
    raises it. ``except spanbreaker.Tripped`` catches it as it catches every trip."""


def _from(trip: Tripped) -> LlamaIndexTripped:
    stop = LlamaIndexTripped(trip.detector, trip.reason, trip.trace_id, trip.evidence, trip.blocked)
    return stop.with_traceback(trip.__traceback__)


def _step_worker(wrapped: Any, module: Any, args: Any, kwargs: Any) -> Any:
    """Around ``workflows``' ``as_step_worker_function(step)``: the step worker it makes lets a trip out as
    :class:`LlamaIndexTripped`."""
    worker = wrapped(*args, **kwargs)

    async def run_step(*step_args: Any, **step_kwargs: Any) -> Any:
        try:
            return await worker(*step_args, **step_kwargs)
        except LlamaIndexTripped:
            raise
        except Tripped as trip:
            raise _from(trip) from None

    return run_step


WORKFLOW_LOGGER = "workflows.runtime.control_loop"
"""Logs every failed step at ERROR with its traceback; a trip is no error."""


class _QuietTrip(logging.Filter):
    """Drops the workflow runner's error record of a step that failed with a trip (the run still fails with it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], Tripped))


_quiet_trip = _QuietTrip()


def _patch(patches: PatchLog) -> None:
    from llama_index.core.instrumentation.dispatcher import Dispatcher  # type: ignore[attr-defined]
    from workflows.runtime.types import step_function

    patches.wrap(Dispatcher, "span_enter", _span_enter)
    patches.wrap(step_function, "as_step_worker_function", _step_worker)
    logger = logging.getLogger(WORKFLOW_LOGGER)
    logger.addFilter(_quiet_trip)
    patches.on_undo(lambda: logger.removeFilter(_quiet_trip))


STOP = SharedPatches(_patch)
