"""The Traceloop SDK's decorators (``traceloop-sdk``: ``@tool``, ``@agent``, ``@workflow``, ``@task``): a decorated
tool's call is known to the breaker as its span starts, whatever content tracing says, and a trip loses no span.

An application that builds its own agent on OpenLLMetry marks its functions with the SDK's decorators; each call is a
span ``<name>.tool`` / ``<name>.agent`` (measured on traceloop-sdk 0.62.4). The span starts bare, with its name only:
its kind (``traceloop.span.kind``), its name (``traceloop.entity.name``, and ``gen_ai.tool.name`` for a tool) and the
call's arguments (``traceloop.entity.input``, ``{"args": [...], "kwargs": {...}}``) are set just after it started, the
result (``traceloop.entity.output``) before it ends, the last two only while content tracing is on
(``TRACELOOP_TRACE_CONTENT``). The breaker decides at start, so stock a looping tool was no call at all: no tool budget
counted it, and no repeat was read.

Here the span starts with the kind and names the SDK sets just after (the SDK's tracer stands behind
:class:`~spanbreaker.adapters.base.StartAttributes`), and the call's arguments and result are shown to the breaker in
process (:mod:`spanbreaker.private_calls`), as the SDK writes them: nothing is added to the spans. The decorator reads
the call's arguments inside its own wrapper, after the span has started; this adapter reads them from that wrapper's
frame (its ``args`` and ``kwargs``), so functions decorated before spanbreaker instrumented are covered too. Where the
frame is not the one this was written for, the call goes on unshown and is keyed when its span ends, from the record
the SDK wrote (content tracing on).
"""

from __future__ import annotations

import json
import logging
import sys
import weakref
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from opentelemetry.trace import Status, StatusCode

from .. import unwinding
from ..conventions import genai as ga
from ..conventions import openllmetry as ol
from ..private_calls import OpenCalls, PrivateCall, shown
from ._patching import PatchingAdapter
from .base import PatchLog, PendingAttributes, StartAttributes

logger = logging.getLogger("spanbreaker")

BASE = "traceloop.sdk.decorators.base"
SYNC_WRAPPER = "sync_wrap"
WRAPPERS = frozenset({SYNC_WRAPPER, "async_wrap", "async_gen_wrap"})
"""The decorator's own wrappers, whose frame holds the call's ``args`` and ``kwargs`` when they start the span."""
PATCHED = ("_setup_span", "_handle_span_output", "_cleanup_span", "_detach_tokens")
_PENDING = PendingAttributes("spanbreaker_traceloop_start")
_SYNCHRONOUS: ContextVar[tuple[tuple[Any, Any], ...]] = ContextVar("spanbreaker_traceloop_synchronous", default=())
"""The spans the synchronous wrapper started and has not ended in this context, with their context tokens."""
Entry = tuple[weakref.ref[Any], PrivateCall]
"""A shown call, with the span it is shown for (weakly: the entry never keeps a span alive)."""
_OPEN: OpenCalls[Entry] = OpenCalls()


def _start_attributes(entity_name: Any, kind: Any) -> dict[str, Any] | None:
    """What the SDK sets on a tool's or an agent's span just after it starts, for the span to start with."""
    value = getattr(kind, "value", kind)
    if value not in ol.TRACELOOP_KINDS or not isinstance(entity_name, str):
        return None
    attributes = {ol.SPAN_KIND: value, ol.ENTITY_NAME: entity_name}
    if value == ol.TRACELOOP_TOOL:
        attributes[ga.TOOL_NAME] = entity_name
    return attributes


def _wrapper_frame(frame: Any) -> Any:
    """The decorator's wrapper calling ``_setup_span``: ``frame`` or one of the two frames above it (wrapt calls this
    adapter's wrapper from C, or through a Python frame of its own); None when no such wrapper is there."""
    for _ in range(3):
        if frame is None or frame.f_code.co_name in WRAPPERS:
            return frame
        frame = frame.f_back
    return None


def _call_in(frame: Any, entity_name: str, encoder: Any) -> PrivateCall | None:
    """The tool call whose span the decorator's wrapper (``frame``) is starting, its arguments as the SDK records them;
    None without such a wrapper, or when the arguments are no JSON."""
    if frame is None:
        return None
    local = frame.f_locals
    args, kwargs = local.get("args"), local.get("kwargs")
    if not isinstance(args, tuple) or not isinstance(kwargs, dict):
        return None
    try:
        text = json.dumps({"args": args, "kwargs": kwargs}, cls=encoder)
    except (TypeError, ValueError):  # the SDK records nothing either
        return None
    return PrivateCall(entity_name, text, arguments_key=ol.ENTITY_INPUT, result_key=ol.ENTITY_OUTPUT)


def _setup_span(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Around the SDK's ``_setup_span(entity_name, kind, version)``: the span starts with its kind and names, and a
    tool call with its arguments shown; a span the synchronous wrapper started is kept for :func:`_unwind`."""
    call: PrivateCall | None = None
    frame: Any = None
    try:
        entity_name, kind = args[0], args[1]
        frame = _wrapper_frame(sys._getframe(1))
        attributes = _start_attributes(entity_name, kind)
        if attributes is not None and attributes[ol.SPAN_KIND] == ol.TRACELOOP_TOOL:
            encoder = getattr(sys.modules.get(BASE), "JSONEncoder", None)
            call = _call_in(frame, entity_name, encoder)
    except Exception:  # an odd call: the span starts as the SDK makes it
        logger.debug("spanbreaker could not read a Traceloop SDK call at start", exc_info=True)
        attributes, call = None, None
    token = _PENDING.var.set(attributes)
    try:
        if call is None:
            started = wrapped(*args, **kwargs)
        else:
            with shown(call):
                started = wrapped(*args, **kwargs)
            _OPEN.keep(id(started[0]), (weakref.ref(started[0]), call))
    finally:
        _PENDING.var.reset(token)
    if frame is not None and frame.f_code.co_name == SYNC_WRAPPER:
        _keep_synchronous(started)
    return started


def _keep_synchronous(started: Any) -> None:
    """Keep a span the synchronous wrapper started, with its context tokens, on this context's stack (spans ended
    since, a generator's, are dropped from it here)."""
    try:
        span, _, tokens = started
    except (TypeError, ValueError):
        return
    stack = tuple(entry for entry in _SYNCHRONOUS.get() if entry[0].is_recording())
    _SYNCHRONOUS.set((*stack, (span, tokens)))


def _unwind(exception: BaseException) -> None:
    """A trip is about to be raised on this thread: the synchronous wrappers it will pass through end their spans and
    detach their context only on an ``Exception``. End them here, innermost first, as the SDK ends a span that
    raised (error status, the exception recorded), and detach their context, so the thread's next run starts a
    trace of its own."""
    stack = _SYNCHRONOUS.get()
    if not stack:
        return
    _SYNCHRONOUS.set(())
    detach = getattr(sys.modules.get(BASE), "_detach_tokens", None)
    for span, tokens in reversed(stack):
        if not span.is_recording():
            continue
        span.set_status(Status(StatusCode.ERROR, str(exception)))
        span.record_exception(exception)
        span.end()
        if detach is not None:
            detach(tokens)


def _open_call(args: tuple[Any, ...], read: Callable[[Any], Entry | None]) -> PrivateCall | None:
    """The tool call shown for the span that is ``args[0]``, by its id (a generator's span is ended by the SDK
    without ``_cleanup_span``: its entry stays until :class:`~spanbreaker.private_calls.OpenCalls` drops it)."""
    if not args:
        return None
    entry = read(id(args[0]))
    return entry[1] if entry is not None and entry[0]() is args[0] else None


def _handle_span_output(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Around ``_handle_span_output(span, result, cls)``: the tool's result, as the SDK records it, for the end."""
    call = _open_call(args, _OPEN.peek)
    if call is not None:
        try:
            call.result = json.dumps(args[1], cls=kwargs.get("cls"))
        except (TypeError, ValueError, IndexError):  # no JSON: the result stays unknown
            call.result = None
    return wrapped(*args, **kwargs)


def _cleanup_span(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Around ``_cleanup_span(span, tokens)``: the span ends with the call shown (and leaves the stack of
    :func:`_unwind`)."""
    stack = _SYNCHRONOUS.get()
    if stack and args:
        _SYNCHRONOUS.set(tuple(entry for entry in stack if entry[0] is not args[0]))
    call = _open_call(args, _OPEN.take)
    if call is None:
        return wrapped(*args, **kwargs)
    with shown(call):
        return wrapped(*args, **kwargs)


def _tracer(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``TracerWrapper.get_tracer``: the SDK's tracer, starting spans with the attributes pending for them."""
    return StartAttributes(wrapped(*args, **kwargs), _PENDING)


class TraceloopSdkAdapter(PatchingAdapter):
    name = "traceloop_sdk"
    framework = BASE
    title = "the Traceloop SDK's decorators"
    unguarded = "a decorated tool's calls are known only when their spans end (and not at all with content tracing off)"

    def patch(self, patches: PatchLog) -> None:
        import importlib

        base = importlib.import_module(BASE)
        tracing = importlib.import_module("traceloop.sdk.tracing.tracing")
        missing = [name for name in PATCHED if not callable(getattr(base, name, None))]
        if missing or not callable(getattr(tracing.TracerWrapper, "get_tracer", None)):
            raise RuntimeError(f"{BASE} has no {missing or 'TracerWrapper.get_tracer'}")
        patches.wrap(base, "_setup_span", _setup_span)
        patches.wrap(base, "_handle_span_output", _handle_span_output)
        patches.wrap(base, "_cleanup_span", _cleanup_span)
        patches.wrap(tracing.TracerWrapper, "get_tracer", _tracer)
        unwinding.register(_unwind)
        patches.on_undo(lambda: unwinding.unregister(_unwind))


ADAPTER = TraceloopSdkAdapter()
