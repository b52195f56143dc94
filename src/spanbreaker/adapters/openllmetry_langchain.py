"""OpenLLMetry's LangChain instrumentation (Traceloop's ``opentelemetry-instrumentation-langchain``): its spans say
what they are when they start, and a tool call's arguments and result reach the breaker whatever content tracing says.

The instrumentor's callback handler starts every span bare and sets its attributes just after (measured on 0.62.4
with langgraph 1.2; ``docs/conformance.md``). The breaker decides at start, so a model call (``<Model>.chat``) was no
model call to it (no budget counted it, none could be vetoed) and a tool call (``execute_tool <name>``, a tool by its
name) was keyed only when it ended, from the callback's record (:mod:`spanbreaker.conventions.openllmetry`), which is
written only while content tracing is on (``TRACELOOP_TRACE_CONTENT``, its default).

Here, around the handler's own callbacks:

* a model call's span starts with ``gen_ai.operation.name`` (``chat``, ``text_completion``) and a tool call's with
  ``gen_ai.operation.name`` and ``gen_ai.tool.name``, the values the handler sets just after (the handler's tracer
  gets them at start: :class:`~.base.StartAttributes`);
* a tool call's arguments are shown to the breaker in process as its span starts, and its result as the span ends
  (:mod:`spanbreaker.private_calls`), read the same way as the records: the 5th identical call is vetoed before it
  runs, with content tracing on or off, and nothing is added to the spans.

Every patch is checked against the release it meets (the handler's callbacks and its naming helper); on another, the
adapter logs a warning and leaves the instrumentor as it is.
"""

from __future__ import annotations

import logging
from typing import Any

from ..conventions import genai as ga
from ..conventions import openllmetry as ol
from ..private_calls import OpenCalls, PrivateCall, shown
from ._patching import PatchingAdapter
from .base import PatchLog, PendingAttributes, StartAttributes

logger = logging.getLogger("spanbreaker")

PACKAGE = "opentelemetry.instrumentation.langchain"
HANDLER = "opentelemetry.instrumentation.langchain.callback_handler"
CALLBACKS = ("on_chat_model_start", "on_llm_start", "on_tool_start", "on_tool_end", "on_tool_error")
_PENDING = PendingAttributes("spanbreaker_openllmetry_langchain_start")
_OPEN: OpenCalls[PrivateCall] = OpenCalls()


def _at_start(handler: Any, attributes: dict[str, Any]) -> dict[str, Any]:
    """``attributes``, for the span the callback is about to start: the handler's tracer (wrapped once) adds them."""
    if not isinstance(handler.tracer, StartAttributes):
        handler.tracer = StartAttributes(handler.tracer, _PENDING)
    return attributes


def _model_start(operation: str) -> Any:
    return _PENDING.around(lambda handler, args, kwargs: _at_start(handler, {ga.OPERATION: operation}), False)


def _tool_start(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        serialized = args[0] if args else kwargs.get("serialized")
        input_str = args[1] if len(args) > 1 else kwargs.get("input_str")
        extra = {k: v for k, v in kwargs.items() if k not in {"run_id", "parent_run_id", "tags", "metadata", "inputs"}}
        name = str(instance._get_name_from_callback(serialized, kwargs=extra))
        call = PrivateCall(name, ol.call_text(input_str, kwargs.get("inputs")))
    except Exception:  # an odd callback: the span starts as the handler makes it, its call read as it ends
        logger.debug("spanbreaker could not read an OpenLLMetry LangChain tool call", exc_info=True)
        return wrapped(*args, **kwargs)
    _OPEN.keep(kwargs.get("run_id"), call)
    token = _PENDING.var.set(_at_start(instance, {ga.OPERATION: "execute_tool", ga.TOOL_NAME: name}))
    try:
        with shown(call):
            return wrapped(*args, **kwargs)
    finally:
        _PENDING.var.reset(token)


def _tool_end(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    call = _OPEN.take(kwargs.get("run_id"))
    if call is None:
        return wrapped(*args, **kwargs)
    try:
        call.result = ol.result_text(args[0] if args else kwargs.get("output"))
    except Exception:  # an output with no text: the result is unknown
        call.result = None
    with shown(call):
        return wrapped(*args, **kwargs)


def _tool_error(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    _OPEN.take(kwargs.get("run_id"))  # failed: known by its error (its arguments since it started), nothing to show
    return wrapped(*args, **kwargs)


class OpenLLMetryLangChainAdapter(PatchingAdapter):
    name = "openllmetry_langchain"
    framework = PACKAGE
    title = "OpenLLMetry's LangChain instrumentation"
    unguarded = ("its model calls are not counted, a tool call is decided as it ends, and with "
                 "TRACELOOP_TRACE_CONTENT=false no tool call is read")

    def patch(self, patches: PatchLog) -> None:
        import importlib

        handler = importlib.import_module(HANDLER).TraceloopCallbackHandler
        missing = [name for name in (*CALLBACKS, "_get_name_from_callback") if not hasattr(handler, name)]
        if missing:
            raise RuntimeError(f"TraceloopCallbackHandler has no {missing}")
        patches.wrap(handler, "on_chat_model_start", _model_start("chat"))
        patches.wrap(handler, "on_llm_start", _model_start("text_completion"))
        patches.wrap(handler, "on_tool_start", _tool_start)
        patches.wrap(handler, "on_tool_end", _tool_end)
        patches.wrap(handler, "on_tool_error", _tool_error)


ADAPTER = OpenLLMetryLangChainAdapter()
