"""Strands Agents adapter: Strands' own OpenTelemetry GenAI spans on the breaker's provider, saying what they are
at start, and a stop that gets out of Strands' concurrent tool executor.

Strands instruments itself (``strands.telemetry.tracer.Tracer``; no OpenInference instrumentor is involved):
``invoke_agent <name>`` → ``execute_event_loop_cycle`` → ``chat`` and ``execute_tool <tool>``, read by
:mod:`spanbreaker.conventions.genai`. What this adapter fixes around (measured on strands-agents 1.62; the cells
are pinned by ``tests/strands/test_conformance.py``):

* **Attributes at start.** ``Tracer._start_span`` starts every span bare and sets its attributes just after: the
  breaker, which decides at start whether a call may run, saw names only. ``chat`` was no model call to it (so
  model-call and token budgets never fired, and no model call could be vetoed), and a tool call was decided only
  when it ended. Here the span starts with the attributes Strands computed for it, on the breaker's provider
  (Strands' tracer is a process singleton bound to whatever provider was global when it was made).
* **Tool arguments and results.** Strands keeps a tool call's arguments and result in span events by default
  (``gen_ai.tool.message`` / ``gen_ai.choice``); only under ``OTEL_SEMCONV_STABILITY_OPT_IN=
  gen_ai_latest_experimental`` does it write ``gen_ai.tool.call.arguments`` (just after start) and
  ``gen_ai.tool.call.result``. Here the arguments are on the tool span at start and the result at its end, in
  either mode, through Strands' own redaction policy (``gen_ai_unredacted_attributes=``: a redacted value reads
  ``[REDACTED]``, unknown to the breaker, never identical).
* **The stop.** ``Tripped`` (a ``BaseException``) passes Strands' ``except Exception`` around tools and models and
  comes out of ``agent(...)`` / ``invoke_async`` with the ``SequentialToolExecutor``. The default
  ``ConcurrentToolExecutor`` runs each tool in an asyncio task that reports only an ``Exception`` to the agent and
  gathers its tasks with ``return_exceptions=True``: a trip died in the task, the model got an empty tool result
  and the run went on. Here a trip in a tool task travels to the executor as an ``Exception`` carrier (so Strands
  cancels the other tasks, as for a failed one) and leaves the executor as the ``Tripped`` it was.
* **Spans left open.** Strands ends its cycle and chat spans only on an ``Exception``; after a trip they were
  never ended. When Strands ends the agent span with a ``Tripped`` as its cancellation, the spans still open under
  it are ended first (with the trip's marks); the agent span keeps Strands' ``strands.cancellation.type``.

A :class:`~spanbreaker.Steered` (an ``Exception``) needs nothing: Strands hands it to the model as the tool's error
result. Every patch is checked against the Strands it meets first (these are private internals): on a release
whose internals differ, the adapter logs a warning and leaves Strands as it is. Strands is imported only when
instrumenting, and not before the application imports it (importing ``strands`` takes seconds: :mod:`._deferred`).
"""

from __future__ import annotations

import contextvars
import importlib.util
import inspect
import logging
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import opentelemetry.context as context_api
from opentelemetry import trace as trace_api

from ..errors import Tripped
from ._deferred import Deferred
from .base import PatchLog

logger = logging.getLogger("spanbreaker")

SCOPE = "strands.telemetry.tracer"
"""Instrumentation scope of Strands' spans (its ``Tracer.service_name``)."""
ARGUMENTS = "gen_ai.tool.call.arguments"
RESULT = "gen_ai.tool.call.result"

START_SPAN_PARAMETERS = ("self", "span_name", "parent_span", "attributes", "span_kind", "force_root", "links")
"""``Tracer._start_span``'s signature as measured; the adapter replaces that method, so it must match exactly."""


class _State:
    def __init__(self) -> None:
        self.tracer: Any = None
        """The breaker's provider's tracer, which every Strands span starts on."""
        self.processor: Any = None


_state = _State()

_in_tool_task: contextvars.ContextVar[bool] = contextvars.ContextVar("spanbreaker_strands_tool_task", default=False)
"""True in a ``ConcurrentToolExecutor`` tool task (which runs in its own copy of the context) until the task's tool
call starts streaming."""


class _TaskTripped(Exception):
    """A trip on its way out of a concurrent tool task: an ``Exception``, which the executor hands to the agent's
    task (a ``BaseException`` it would swallow)."""

    def __init__(self, trip: Tripped) -> None:
        super().__init__(str(trip))
        self.trip = trip


# ------------------------------------------------------------------------------------------- spans at start
def _start_span(self: Any, span_name: str, parent_span: Any = None, attributes: Any = None, span_kind: Any = None,
                force_root: bool = False, links: Any = None) -> Any:
    """``Tracer._start_span`` as Strands 1.62 writes it, with the attributes given at creation (Strands sets them
    just after), on the breaker's provider."""
    if force_root:
        context: Any = context_api.Context()
    else:
        if not parent_span:
            parent_span = trace_api.get_current_span()
        context = None
        if parent_span and parent_span.is_recording() and parent_span != trace_api.INVALID_SPAN:
            context = trace_api.set_span_in_context(parent_span)
    start_attributes = {"gen_ai.event.start_time": datetime.now(UTC).isoformat(), **(attributes or {})}
    tracer = _state.tracer if _state.tracer is not None else self.tracer
    return tracer.start_span(name=span_name, context=context,
                             kind=trace_api.SpanKind.INTERNAL if span_kind is None else span_kind, links=links,
                             attributes=start_attributes)


def _start_tool_call_span(wrapped: Any, tracer: Any, args: Any, kwargs: Any) -> Any:
    """Around ``Tracer.start_tool_call_span(tool, parent_span, custom_trace_attributes, **kwargs)``: the call's
    arguments among the span's start attributes (its ``**kwargs`` are), redacted as Strands redacts them."""
    try:
        from strands.telemetry.tracer import serialize

        tool = args[0] if args else kwargs["tool"]
        if ARGUMENTS not in kwargs:
            kwargs = {**kwargs, ARGUMENTS: tracer._redact(ARGUMENTS, serialize(tool["input"]))}
    except Exception:  # an odd call: the span starts as Strands makes it
        logger.debug("spanbreaker could not read a Strands tool call at start", exc_info=True)
    return wrapped(*args, **kwargs)


def _end_tool_call_span(wrapped: Any, tracer: Any, args: Any, kwargs: Any) -> Any:
    """Around ``Tracer.end_tool_call_span(span, tool_result, error=None)``: the result on the span in Strands'
    default mode too (it writes it only under ``gen_ai_latest_experimental``, and only for a success)."""
    try:
        span = args[0] if args else kwargs.get("span")
        result = args[1] if len(args) > 1 else kwargs.get("tool_result")
        if (not getattr(tracer, "use_latest_genai_conventions", False) and result is not None and span is not None
                and span.is_recording() and result.get("status") != "error"):
            from strands.telemetry.tracer import serialize

            span.set_attribute(RESULT, tracer._redact(RESULT, serialize(result.get("content", []))))
    except Exception:
        logger.debug("spanbreaker could not read a Strands tool result", exc_info=True)
    return wrapped(*args, **kwargs)


# ----------------------------------------------------------------------------------------------- the stop
def _task(wrapped: Any, executor: Any, args: Any, kwargs: Any) -> Any:
    """Around ``ConcurrentToolExecutor._task``: marks the tool task, so :func:`_stream_with_trace` knows a trip
    there must travel as an ``Exception``."""

    async def run() -> Any:
        _in_tool_task.set(True)  # the task's own context: nothing outside it sees this
        return await wrapped(*args, **kwargs)

    return run()


def _stream_with_trace(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Around ``ToolExecutor._stream_with_trace`` (one tool call's events): in a concurrent tool task, a trip goes
    out as :class:`_TaskTripped`, which the task's ``except Exception`` queues for the executor."""
    stream = wrapped(*args, **kwargs)
    if not _in_tool_task.get():
        return stream
    _in_tool_task.set(False)  # calls nested in this one (an agent used as a tool) are not the task's own

    async def events() -> AsyncIterator[Any]:
        try:
            async for event in stream:
                yield event
        except Tripped as trip:
            raise _TaskTripped(trip) from None
        finally:
            await stream.aclose()

    return events()


def _execute(wrapped: Any, executor: Any, args: Any, kwargs: Any) -> Any:
    """Around ``ConcurrentToolExecutor._execute``: the executor raises a queued :class:`_TaskTripped` (after
    cancelling the other tool tasks); it leaves here as the trip itself."""
    stream = wrapped(*args, **kwargs)

    async def events() -> AsyncIterator[Any]:
        try:
            async for event in stream:
                yield event
        except _TaskTripped as carried:
            raise carried.trip from None
        finally:
            await stream.aclose()

    return events()


class _Unended:
    """The agent span as Strands' ``end_span_with_cancellation`` sees it: its attributes go through, its end waits
    for :func:`_end_span_with_cancellation`."""

    def __init__(self, span: Any) -> None:
        self._span = span

    def end(self, *args: Any, **kwargs: Any) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._span, name)


def _end_span_with_cancellation(wrapped: Any, tracer: Any, args: Any, kwargs: Any) -> Any:
    """Around ``Tracer.end_span_with_cancellation(span, cancellation)``, which ends the agent span of a run a
    ``BaseException`` aborted: after a trip, the cycle and chat spans Strands left open under it end first."""
    span = args[0] if args else kwargs.get("span")
    cancellation = args[1] if len(args) > 1 else kwargs.get("cancellation")
    processor = _state.processor
    if not isinstance(cancellation, Tripped) or processor is None or span is None or not span.is_recording():
        return wrapped(*args, **kwargs)
    wrapped(_Unended(span), cancellation)  # Strands' cancellation attributes (strands.cancellation.type)
    try:
        context = span.get_span_context()
        processor.end_open_spans(context.trace_id, None, under=context.span_id)  # the agent span too, last
    except Exception:
        logger.debug("spanbreaker could not end the spans of a stopped Strands run", exc_info=True)
    if span.is_recording():  # a span the breaker does not track (another provider)
        span.end()
    return None


# ---------------------------------------------------------------------------------------------- the adapter
def _parameters(function: Any) -> tuple[str, ...]:
    return tuple(inspect.signature(function).parameters)


def check_compatible() -> None:
    """Raise if the Strands installed is not one whose internals the patches were written for."""
    from strands.telemetry.tracer import Tracer, serialize  # noqa: F401 (serialize: the patches use it)
    from strands.tools.executors._executor import ToolExecutor
    from strands.tools.executors.concurrent import ConcurrentToolExecutor

    problems = []
    if _parameters(Tracer._start_span) != START_SPAN_PARAMETERS:
        problems.append(f"Tracer._start_span{_parameters(Tracer._start_span)}")
    for name, first in (("start_tool_call_span", ("self", "tool")), ("end_tool_call_span", ("self", "span",
                                                                                              "tool_result")),
                        ("end_span_with_cancellation", ("self", "span", "cancellation")),
                        ("_redact", ("self", "attribute_name", "value"))):
        function = getattr(Tracer, name, None)
        if function is None or _parameters(function)[:len(first)] != first:
            problems.append(f"Tracer.{name}")
    if not isinstance(inspect.getattr_static(ToolExecutor, "_stream_with_trace", None), staticmethod):
        problems.append("ToolExecutor._stream_with_trace")
    for name in ("_task", "_execute"):
        if not inspect.iscoroutinefunction(getattr(ConcurrentToolExecutor, name, None)) and not \
                inspect.isasyncgenfunction(getattr(ConcurrentToolExecutor, name, None)):
            problems.append(f"ConcurrentToolExecutor.{name}")
    if problems:
        raise RuntimeError("unexpected Strands internals: " + ", ".join(problems))


def patch(patches: PatchLog) -> None:
    from strands.telemetry.tracer import Tracer
    from strands.tools.executors._executor import ToolExecutor
    from strands.tools.executors.concurrent import ConcurrentToolExecutor

    patches.patch(Tracer, "_start_span", _start_span)
    patches.wrap(Tracer, "start_tool_call_span", _start_tool_call_span)
    patches.wrap(Tracer, "end_tool_call_span", _end_tool_call_span)
    patches.wrap(Tracer, "end_span_with_cancellation", _end_span_with_cancellation)
    patches.wrap(ToolExecutor, "_stream_with_trace", _stream_with_trace)
    patches.wrap(ConcurrentToolExecutor, "_task", _task)
    patches.wrap(ConcurrentToolExecutor, "_execute", _execute)


class StrandsAdapter:
    name = "strands"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._patches = PatchLog()
        self._deferred = Deferred("strands")

    def available(self) -> bool:
        try:
            return importlib.util.find_spec("strands") is not None
        except (ImportError, ValueError):
            return False

    def instrument(self, tracer_provider: Any, processor: Any) -> None:
        """Put Strands' spans on ``tracer_provider`` (whose processors include ``processor``), now or when the
        application imports Strands; idempotent (a second call moves them to that provider)."""
        self._deferred.run_or_defer(lambda: self._instrument(tracer_provider, processor))

    def _instrument(self, tracer_provider: Any, processor: Any) -> None:
        with self._lock:
            if not self._patches:
                try:
                    check_compatible()
                    patch(self._patches)
                except Exception:  # another Strands release: it runs as it is, unguarded by these patches
                    self._patches.undo()
                    logger.warning("spanbreaker could not instrument Strands Agents: it runs as it is, its spans as "
                                   "Strands makes them, on the provider it uses", exc_info=True)
                    return
            _state.tracer = tracer_provider.get_tracer(SCOPE)
            _state.processor = processor

    def uninstrument(self) -> None:
        self._deferred.cancel()
        with self._lock:
            self._patches.undo()
            _state.tracer = None
            _state.processor = None


ADAPTER = StrandsAdapter()
