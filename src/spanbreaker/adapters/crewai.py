"""CrewAI adapter: the OpenInference CrewAI instrumentor in either of its modes, tool spans saying what they are
at start, and a stop that reaches the crew from CrewAI's event-handler threads.

What this adapter fixes around (measured on crewai 1.15 / openinference-instrumentation-crewai 1.1.21; the cells
are pinned by ``tests/crewai/test_conformance.py``):

* **Wrapper mode** (the instrumentor's default, what :meth:`CrewAIAdapter.instrument` switches on): the tool span
  (around ``BaseTool.run`` / ``Tool.run``) starts with its kind only; the instrumentor sets the arguments and the
  tool's name just after the start, too late for the breaker, which decides at start. A repeated call was
  then decided when it ended and the next call vetoed, and CrewAI's own guard (five identical calls with one
  result) ended the run first. Here the instrumentor's tracer gets, at start, the arguments and name the
  instrumentor computes itself, so the 5th identical call is vetoed before it runs. ``Tripped`` (a
  ``BaseException``) passes CrewAI's ``except Exception`` and comes out of ``crew.kickoff()``.
* **Event-listener mode** (``CrewAIInstrumentor().instrument(use_event_listener=True)``, set up by the
  application; spanbreaker then adds only its hooks): spans start in handlers that CrewAI's event bus runs on its
  own thread pool, so a trip raised there never reached the agent (the run went on, the vetoed call ran). Here the
  bus's handler call keeps a trip aside instead of letting it abort the other handlers, and ``emit`` of a call's
  start (tool, model, agent) waits for that event's handlers and raises the trip on the thread that emitted it:
  CrewAI emits those events right before running the call, so the vetoed call never runs and ``Tripped`` comes out
  of ``crew.kickoff()``. The wait is bounded (:data:`START_WAIT_S`) and never taken on the bus's own threads.
  CrewAI emits its failure events only for an ``Exception``: the spans the listener holds open for the tripped
  trace (the crew's, the agent's) are ended when the trip leaves ``kickoff``, as the listener ends a failed one.
  A steer (``response="steer"``) is kept and raised the same way (the bus would log and swallow it, and the
  steered call would run): the call does not run, though CrewAI restarts the task on it rather than handing the
  model its message (wrapper mode does that), and the next identical call stops the crew.
* In both modes CrewAI's event scope stack (a context variable) is put back as it was when ``kickoff`` began
  when the run raised: a trip skips the events that would have popped it (and CrewAI's own failure path leaves
  the agent's scope behind), and the event listener would start no span of the next run on that thread.

* ``Agent.kickoff`` (an agent without a crew) and CrewAI's native async ``crew.akickoff()`` get the same
  clean-up; ``akickoff`` in wrapper mode also gets the crew span the instrumentor makes only for the sync
  ``kickoff``: without it every tool span was a trace of its own and no loop could be seen across calls.

Everything framework-specific stays in this module; CrewAI is imported only when instrumenting, and not before the
application imports it (importing ``crewai`` takes seconds: :mod:`._deferred`).
"""

from __future__ import annotations

import functools
import logging
import threading
import weakref
from typing import Any

from ..errors import Steered, Tripped
from ._hooked import HookedAdapter
from .base import PatchLog, StartAttributes

logger = logging.getLogger("spanbreaker")

SCOPE = "openinference.instrumentation.crewai"
"""Instrumentation scope of the instrumentor's spans (both modes)."""
GATED_EVENTS = frozenset({"ToolUsageStartedEvent", "LLMCallStartedEvent", "AgentExecutionStartedEvent",
                          "LiteAgentExecutionStartedEvent"})
"""CrewAI events whose handlers start a span the breaker may veto (a tool, model or agent call)."""
START_WAIT_S = 10.0
"""Longest an ``emit`` of a call's start waits for its handlers; past it the call goes on (the bus is stuck, and
the application must not be)."""
BUS_THREADS = ("CrewAISyncHandler", "CrewAIEventsLoop")
"""Name prefixes of the event bus's own threads: an ``emit`` from there never waits (its handlers may need them)."""

_pending = threading.local()
"""The start attributes of the tool span being started on this thread (set around the instrumentor's start)."""
_stopped: dict[int, tuple[Any, Tripped | Steered]] = {}
"""Trips (and steers) raised by a handler, by ``id(event)`` (with the event, so a reused id never matches), until
the ``emit`` of that event raises them."""
_STOPPED_KEPT = 256
"""Trips whose ``emit`` never came for them (emitted on a bus thread, or past the wait) are dropped, oldest
first, beyond this many."""
_stopped_lock = threading.Lock()


# ------------------------------------------------------------------------------------------------ wrapper mode
def _run_with_span(wrapped: Any, run_wrapper: Any, args: Any, kwargs: Any) -> Any:
    """Around the instrumentor's ``_BaseToolRunWrapper._run_with_span(method, tool, args, kwargs)``: its span
    starts with the tool's name and arguments, as the instrumentor records them."""
    try:
        from openinference.instrumentation import get_input_attributes
        from openinference.instrumentation.crewai._wrappers import _get_input_value
        from openinference.semconv.trace import OpenInferenceMimeTypeValues

        method, tool, call_args, call_kwargs = args
        attributes = dict(get_input_attributes(_get_input_value(method, *call_args, **call_kwargs),
                                               mime_type=OpenInferenceMimeTypeValues.JSON))
        if getattr(tool, "name", None):
            attributes["tool.name"] = str(tool.name)
        if not isinstance(run_wrapper._tracer, StartAttributes):
            run_wrapper._tracer = StartAttributes(run_wrapper._tracer, _pending)
    except Exception:  # an odd call: the span starts as the instrumentor makes it
        logger.debug("spanbreaker could not read a CrewAI tool call at start", exc_info=True)
        attributes = None
    _pending.attributes = attributes
    try:
        return wrapped(*args, **kwargs)
    finally:
        _pending.attributes = None


# ----------------------------------------------------------------------------------------- event-listener mode
def _keep(event: Any, stop: Tripped | Steered) -> None:
    with _stopped_lock:
        if len(_stopped) >= _STOPPED_KEPT:
            del _stopped[next(iter(_stopped))]
        _stopped[id(event)] = (event, stop)


def _call_handler(wrapped: Any, module: Any, args: Any, kwargs: Any) -> Any:
    """Around the bus's ``is_call_handler_safe(handler, source, event, ...)``: a trip the handler raises is kept
    for the ``emit`` of that event (it would abort the event's other handlers and die on the pool thread); so is a
    steer, which the bus would log and swallow (an ``Exception``), the steered call then running."""
    if len(args) < 3:
        return wrapped(*args, **kwargs)
    try:
        return wrapped(_steerable(args[0]), *args[1:], **kwargs)
    except Tripped as trip:
        _keep(args[2], trip)
        return None


_steerables: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
"""Per event handler, the same handler keeping a steer it raises (one wrapper per handler: the bus caches handlers'
signatures by identity)."""


def _steerable(handler: Any) -> Any:
    """``handler`` with a ``Steered`` it raises kept for the ``emit`` of its event instead of raised (its signature
    is the handler's: the bus passes its arguments by their count)."""
    try:
        return _steerables[handler]
    except KeyError:
        pass
    except TypeError:  # not weakly referenceable: as it is
        return handler

    @functools.wraps(handler)
    def steerable(source: Any, event: Any, *rest: Any) -> Any:
        try:
            return handler(source, event, *rest)
        except Steered as steer:
            _keep(event, steer)
            return None

    try:
        _steerables[handler] = steerable
    except TypeError:
        return handler
    return steerable


def _emit(wrapped: Any, bus: Any, args: Any, kwargs: Any) -> Any:
    """Around ``CrewAIEventsBus.emit(source, event)``: for a call's start, wait for the handlers and raise the
    trip one of them hit, on the emitting thread, before the call runs."""
    future = wrapped(*args, **kwargs)
    event = args[1] if len(args) > 1 else kwargs.get("event")
    if (future is None or type(event).__name__ not in GATED_EVENTS
            or threading.current_thread().name.startswith(BUS_THREADS)):
        return future
    try:
        future.result(timeout=START_WAIT_S)
    except Tripped:  # a handler outside is_call_handler_safe (an async one): the same stop
        raise
    except Exception:  # the bus's own failure or the time-out: not ours to raise
        logger.debug("spanbreaker did not see CrewAI's handlers finish for %s", type(event).__name__,
                     exc_info=True)
    with _stopped_lock:
        kept = _stopped.pop(id(event), None)
    if kept is not None and kept[0] is event:
        raise kept[1]
    return future


def _end_open_spans(trip: Tripped) -> None:
    """After a trip left ``crew.kickoff()`` in event-listener mode: end the spans the listener still holds open for
    the trip's trace (the crew's, the agent's), as the listener ends a failed one. CrewAI emits its failure
    events only for an ``Exception``, so nothing would end them, and the listener would keep them."""
    from openinference.instrumentation.crewai import CrewAIInstrumentor

    assembler = getattr(getattr(CrewAIInstrumentor(), "_event_listener", None), "_assembler", None)
    if assembler is None:  # wrapper mode: its spans end with the calls they wrap
        return
    from crewai.events import crewai_event_bus
    from openinference.instrumentation.crewai._event_assembler import _SpanEndSpec

    crewai_event_bus.flush(timeout=START_WAIT_S)  # the run's last events end their own spans first
    trace_id = int(trip.trace_id, 16)
    with assembler._lock:
        held = [(key, entry) for key, entry in assembler._spans.items()
                if entry.span.get_span_context().trace_id == trace_id]
        for key, _ in held:
            assembler._spans.pop(key, None)
    for _, entry in reversed(held):  # youngest first, as the run unwound
        assembler._finalize_span(entry, _SpanEndSpec(error=str(trip)), None)


def _kickoff(wrapped: Any, crew: Any, args: Any, kwargs: Any) -> Any:
    """Around ``Crew.kickoff`` and ``Agent.kickoff`` (an agent run without a crew): a trip leaves no span of its
    trace open, and CrewAI's event scope as it found it.

    CrewAI keeps a stack of the events that opened scopes (crew, task, agent) in a context variable and pops it when
    it emits their end, which it does only for an ``Exception``. After a trip the stack would still hold the
    aborted run's scopes, and the next crew run on this thread would emit its events under them (CrewAI warns of
    mismatched pairs; the event listener parents the new spans to events that never end, and never starts them).
    CrewAI 1.15 leaves the agent's scope on the stack after an ordinary failure too (its agent-error path does not
    pop it), so the stack is put back after any exception."""
    from crewai.events import event_context

    stack, last = event_context._event_id_stack.get(), event_context.get_last_event_id()
    try:
        return wrapped(*args, **kwargs)
    except BaseException as stop:
        _after_stop(stop, stack, last)
        raise


def _root_span(crew: Any) -> Any:
    """The crew's span for ``akickoff`` in wrapper mode (a context manager), else a no-op one.

    The instrumentor wraps only the sync ``kickoff``; under the native async ``akickoff`` every tool span was a
    trace of its own and no loop could be seen across calls. This span is the one the instrumentor makes for
    ``kickoff`` (its tracer, name and kind), so the run's calls share a trace."""
    import contextlib

    from openinference.instrumentation.crewai import CrewAIInstrumentor
    from openinference.instrumentation.crewai._wrappers import _get_crew_name

    instrumentor = CrewAIInstrumentor()
    tracer = getattr(instrumentor, "_tracer", None)
    if (not instrumentor.is_instrumented_by_opentelemetry or tracer is None
            or getattr(instrumentor, "_event_listener", None) is not None):
        return contextlib.nullcontext()
    return tracer.start_as_current_span(
        f"{_get_crew_name(crew)}.kickoff", record_exception=False, set_status_on_exception=False,
        attributes={"openinference.span.kind": "CHAIN", "crew_key": str(crew.key), "crew_id": str(crew.id)})


def _akickoff(wrapped: Any, crew: Any, args: Any, kwargs: Any) -> Any:
    """Around ``Crew.akickoff``: what :func:`_kickoff` does for ``kickoff``, and in wrapper mode the crew's span."""
    from crewai.events import event_context

    async def run() -> Any:
        stack, last = event_context._event_id_stack.get(), event_context.get_last_event_id()
        try:
            with _root_span(crew):
                return await wrapped(*args, **kwargs)
        except BaseException as stop:
            _after_stop(stop, stack, last)
            raise

    return run()


def _after_stop(stop: BaseException, stack: Any, last: Any) -> None:
    from crewai.events import event_context

    try:
        event_context.restore_event_scope(stack)
        event_context._last_event_id.set(last)
        if isinstance(stop, Tripped):
            _end_open_spans(stop)
    except Exception:
        logger.debug("spanbreaker could not clean up after a stopped CrewAI run", exc_info=True)


class CrewAIAdapter(HookedAdapter):
    """Named after the instrumentor's entry point (``crewai``), as every adapter is: naming it in
    ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` turns both off. It switches the instrumentor on in wrapper mode; an
    instrumentor the application switched on itself, in either mode, is kept, and only the hooks are added."""

    name = "crewai"
    framework = "crewai"
    scope = SCOPE

    def patch(self, patches: PatchLog) -> None:
        from crewai import Agent, Crew
        from crewai.events import event_bus
        from openinference.instrumentation.crewai._wrappers import _BaseToolRunWrapper

        patches.wrap(_BaseToolRunWrapper, "_run_with_span", _run_with_span)
        patches.wrap(event_bus, "is_call_handler_safe", _call_handler)
        patches.wrap(event_bus.CrewAIEventsBus, "emit", _emit)
        patches.wrap(Crew, "kickoff", _kickoff)
        patches.wrap(Agent, "kickoff", _kickoff)
        patches.wrap(Crew, "akickoff", _akickoff)

    def unpatched(self) -> None:
        with _stopped_lock:
            _stopped.clear()

    def make_instrumentor(self) -> Any:
        from openinference.instrumentation.crewai import CrewAIInstrumentor

        return CrewAIInstrumentor()


ADAPTER = CrewAIAdapter()
