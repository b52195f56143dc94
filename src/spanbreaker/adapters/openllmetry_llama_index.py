"""OpenLLMetry's LlamaIndex instrumentation (Traceloop's ``opentelemetry-instrumentation-llamaindex``): its spans say
what they are when they start, a tool call reaches the breaker whatever content tracing says, the stop gets past
LlamaIndex's dispatcher, and no span is lost or ended early.

The instrumentor is a span handler of LlamaIndex's instrumentation dispatcher (measured on 0.62.4 with
llama-index-core 0.14; ``docs/conformance.md``). Stock, a looping ``FunctionAgent`` ran 29 identical searches to
``max_iterations``, content tracing on or off:

* every span starts bare, ``<Class>.task`` (a tool call ``FunctionTool.task``, a model call ``<LLM>.task``), and is
  told what it is only after it started, so the breaker saw no tool call and no model call;
* a call's arguments and result (``traceloop.entity.input`` / ``.output``) are whole records, and only with
  ``TRACELOOP_TRACE_CONTENT`` on;
* the dispatcher swallows what a span handler raises: a veto at a tool span's start did not stop the tool;
* a streamed model call's end ended every span above it, the workflow's root included (``FunctionAgent`` streams by
  default): the trace ended after the first turn, and each later turn read as a run of its own;
* a span the dispatcher drops (its call raised: a failed run, a trip) was never ended, so never exported.

Here, around the handler: a tool call's span starts as ``execute_tool`` with its ``gen_ai.tool.name``, and a model
call's (the outermost of a model's methods that send a request) as ``chat`` / ``text_completion``; the tool's
arguments are shown to the breaker in process as its span starts and its result as the span ends
(:mod:`spanbreaker.private_calls`: nothing is added to the spans); the stop takes the way OpenInference's adapter's
takes (:mod:`._llama_index_stop`); a streamed call's end ends only the spans above it that wait for a stream; a
dropped span is ended with its error. The 5th identical call is vetoed before it runs.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

from ..conventions import genai as ga
from ..conventions import openllmetry as ol
from ..conventions.llama_index import MODEL_CALLS
from ..errors import Steered, Tripped
from ..private_calls import OpenCalls, PrivateCall, shown
from ._llama_index_stop import STOP, keep_stop
from ._patching import PatchingAdapter
from .base import PatchLog, PendingAttributes, StartAttributes

logger = logging.getLogger("spanbreaker")

PACKAGE = "opentelemetry.instrumentation.llamaindex"
HANDLERS = "opentelemetry.instrumentation.llamaindex.dispatcher_wrapper"
_PENDING = PendingAttributes("spanbreaker_openllmetry_llama_index_start")
_OPEN: OpenCalls[PrivateCall] = OpenCalls()
_MODEL_OPERATIONS = frozenset({"chat", "text_completion"})


def _start(handler: Any, id_: str, bound_args: Any, instance: Any,
           parent_id: Any) -> tuple[dict[str, Any] | None, PrivateCall | None]:
    """The start attributes of a tool or model call's span (None for any other), and a tool call to show."""
    from llama_index.core.llms.llm import LLM
    from llama_index.core.tools import BaseTool

    method = id_.partition("-")[0].rpartition(".")[2]
    if isinstance(instance, BaseTool) and method in ("call", "acall"):
        name = str(instance.metadata.get_name())
        arguments = dict(bound_args.arguments) if bound_args is not None else {}
        call = PrivateCall(name, ol.llama_index_call(arguments.get("args") or (), arguments.get("kwargs")))
        return {ga.OPERATION: "execute_tool", ga.TOOL_NAME: name}, call
    if isinstance(instance, LLM) and method in MODEL_CALLS:
        parent = handler.open_spans.get(parent_id) if parent_id else None
        above = getattr(getattr(parent, "otel_span", None), "attributes", None) or {}
        if above.get(ga.OPERATION) in _MODEL_OPERATIONS:
            return None, None  # achat calling chat: one model call, counted on the outer span
        return {ga.OPERATION: "chat" if "chat" in method else "text_completion"}, None
    return None, None


def _new_span(wrapped: Any, handler: Any, args: Any, kwargs: Any) -> Any:
    """Around the handler's ``new_span``: the span starts with its start attributes and a tool call is shown; a trip
    its start raised is kept for the dispatcher to raise (it swallows it here)."""
    id_ = kwargs.get("id_", args[0] if args else "")
    try:
        attributes, call = _start(handler, id_, kwargs.get("bound_args"), kwargs.get("instance"),
                                  kwargs.get("parent_span_id"))
        if attributes is not None and not isinstance(handler._tracer, StartAttributes):
            handler._tracer = StartAttributes(handler._tracer, _PENDING)
    except Exception:  # an odd span: it starts as the instrumentor makes it
        logger.debug("spanbreaker could not read a LlamaIndex span at start", exc_info=True)
        attributes, call = None, None
    token = _PENDING.var.set(attributes)
    try:
        if call is None:
            return wrapped(*args, **kwargs)
        _OPEN.keep(id_, call)
        with shown(call):
            return wrapped(*args, **kwargs)
    except (Tripped, Steered) as stop:
        _OPEN.take(id_)
        keep_stop(stop)
        raise
    finally:
        _PENDING.var.reset(token)


def _result_text(result: Any) -> str | None:
    """A tool's result as the breaker compares it: the ``ToolOutput``'s ``raw_output`` (text as it is, anything else
    as JSON), as :func:`spanbreaker.conventions.llama_index.tool_result` reads OpenInference's record of it."""
    raw = getattr(result, "raw_output", result)
    return None if raw is None else ol.as_text(raw)


def _exit_span(wrapped: Any, handler: Any, args: Any, kwargs: Any) -> Any:
    """Around ``prepare_to_exit_span``: a tool call's result shown while its span ends."""
    call = _OPEN.take(kwargs.get("id_", args[0] if args else ""))
    if call is None:
        return wrapped(*args, **kwargs)
    try:
        call.result = _result_text(kwargs.get("result"))
    except Exception:  # a result with no text: unknown
        call.result = None
    with shown(call):
        return wrapped(*args, **kwargs)


def _drop_span(wrapped: Any, handler: Any, args: Any, kwargs: Any) -> Any:
    """Around ``prepare_to_drop_span`` (the call raised): the instrumentor hands the span back without ending it, so
    it would never be exported; it is ended here with the error, as an exit ends it."""
    from llama_index.core.workflow import Workflow
    from opentelemetry.trace import Status, StatusCode

    _OPEN.take(kwargs.get("id_", args[0] if args else ""))
    holder = wrapped(*args, **kwargs)
    span = getattr(holder, "otel_span", None)
    if span is not None:
        try:
            error = kwargs.get("err")
            if isinstance(error, BaseException) and span.is_recording():
                span.record_exception(error)
                span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"[:512]))
            holder.end(should_detach_context=not isinstance(kwargs.get("instance"), Workflow))
        except Exception:
            logger.debug("spanbreaker could not end a dropped LlamaIndex span", exc_info=True)
    return holder


def _notify_waiting_parents(holder: Any) -> list[Any]:
    """``SpanHolder.notify_parent`` as it is meant: when a streamed call ends, end the spans above it that wait for
    the stream. The instrumentor's ends every span above, whether it waits or not (the workflow run included)."""
    parent = holder.parent
    if parent is not None and parent.waiting_for_streaming and parent._active:
        parent.end()
        return [parent, *_notify_waiting_parents(parent)]
    return []


class OpenLLMetryLlamaIndexAdapter(PatchingAdapter):
    name = "openllmetry_llama_index"
    framework = PACKAGE
    title = "OpenLLMetry's LlamaIndex instrumentation"
    unguarded = ("its tool and model calls are not read at start, a veto does not stop a call, streamed runs end "
                 "their trace after the first turn, and a failed run's spans are not exported")

    def patch(self, patches: PatchLog) -> None:
        module = importlib.import_module(HANDLERS)
        handler, holder = module.OpenLLMetrySpanHandler, module.SpanHolder
        missing = [f"OpenLLMetrySpanHandler.{name}" for name in ("new_span", "prepare_to_exit_span",
                                                                 "prepare_to_drop_span") if not hasattr(handler, name)]
        missing += [f"SpanHolder.{name}" for name in ("notify_parent", "end") if not hasattr(holder, name)]
        fields = getattr(holder, "__dataclass_fields__", {})
        missing += [f"SpanHolder.{name}" for name in ("parent", "otel_span", "waiting_for_streaming", "_active")
                    if name not in fields]
        if missing:
            raise RuntimeError(f"unexpected OpenLLMetry LlamaIndex internals: {', '.join(missing)}")
        STOP.hold(self.name, patches)
        patches.wrap(handler, "new_span", _new_span)
        patches.wrap(handler, "prepare_to_exit_span", _exit_span)
        patches.wrap(handler, "prepare_to_drop_span", _drop_span)
        patches.patch(holder, "notify_parent", _notify_waiting_parents)


ADAPTER = OpenLLMetryLlamaIndexAdapter()
