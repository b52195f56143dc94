"""LlamaIndex adapter (``FunctionAgent`` and the other workflow agents): the OpenInference LlamaIndex instrumentor,
its spans saying what they are at start, and a stop that gets past LlamaIndex's dispatcher.

What this adapter fixes around (measured on llama-index-core 0.14 / openinference-instrumentation-llama-index 4.6;
the cells are pinned by ``tests/llama_index/test_conformance.py``):

* The instrumentor is a span handler of LlamaIndex's instrumentation dispatcher. It starts every span with no
  attributes and writes the kind, the tool name and the arguments only when the span ends, so a breaker, which
  decides at span start whether a call may run, saw only anonymous spans: a ``FunctionAgent`` looping on one
  tool ran to ``max_iterations`` unseen. Here the instrumentor's tracer gets, at start, the attributes the
  instrumentor computes for the span anyway (its own ``process_instance`` / ``process_input``, run early), for
  tool calls and for the model calls that reach the model (:mod:`spanbreaker.conventions.llama_index` says
  which); the exported span is what the instrumentor makes.
* LlamaIndex's dispatcher calls each span handler inside ``except BaseException: pass``: the
  :class:`spanbreaker.Tripped` the breaker raises from the span's start would be swallowed and the call would run
  anyway. The handler's ``new_span`` keeps the trip aside, and the dispatcher raises it before the call runs
  (:mod:`._llama_index_stop`, shared with OpenLLMetry's instrumentor's adapter).
* The vetoed span never starts in the handler (the breaker ends and exports it itself, marked blocked), and the
  decorator's ``active_span_id`` is put back to the parent, so later spans of the trace still nest under it.

Everything framework-specific stays in this module; LlamaIndex is imported only when instrumenting, and not
before the application imports it (importing ``llama_index.core`` takes over a second: :mod:`._deferred`).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from ..conventions.llama_index import MODEL_CALLS, method_of
from ..errors import Steered, Tripped
from ._hooked import HookedAdapter
from ._llama_index_stop import STOP, LlamaIndexTripped, keep_stop
from .base import PatchLog, StartAttributes

__all__ = ["ADAPTER", "LlamaIndexTripped"]

logger = logging.getLogger("spanbreaker")

SCOPE = "openinference.instrumentation.llama_index"
"""Instrumentation scope of the instrumentor's spans."""

_local = threading.local()
"""Per thread: ``attributes`` for the span the handler is starting."""


def _start_attributes(handler: Any, id_: str, bound_args: Any, instance: Any, parent_id: Any) -> dict[str, Any] | None:
    """What the instrumentor would write on a tool or model-call span at its end and knows now; None for others."""
    from llama_index.core.llms.llm import LLM
    from llama_index.core.tools import BaseTool
    from openinference.instrumentation.llama_index._handler import _init_span_kind, _Span
    from opentelemetry.trace import INVALID_SPAN

    if isinstance(instance, LLM):
        if method_of(id_.partition("-")[0]) not in MODEL_CALLS:
            return None  # _prepare_chat_with_tools, ...: nothing is sent
        parent = handler.open_spans.get(parent_id) if parent_id else None
        if parent is not None and getattr(parent, "_span_kind", None) == "LLM":
            return None  # achat calling chat: one model call, counted on the outer span
    elif not isinstance(instance, BaseTool):
        return None
    probe = _Span(otel_span=INVALID_SPAN, span_kind=_init_span_kind(instance), id_=id_)
    probe.process_instance(instance)
    probe.process_input(instance, bound_args)
    attributes: dict[str, Any] = dict(probe._attributes)
    attributes["openinference.span.kind"] = probe._span_kind
    return attributes


def _new_span(wrapped: Any, handler: Any, args: Any, kwargs: Any) -> Any:
    """Around ``_SpanHandler.new_span``: the span starts with its start attributes; a trip its start raises is
    kept for :func:`_span_enter` (the dispatcher swallows it here)."""
    try:
        attributes = _start_attributes(handler, kwargs.get("id_", args[0] if args else ""),
                                       kwargs.get("bound_args"), kwargs.get("instance"),
                                       kwargs.get("parent_span_id"))
        if attributes is not None and not isinstance(handler._otel_tracer, StartAttributes):
            handler._otel_tracer = StartAttributes(handler._otel_tracer, _local)
    except Exception:  # an odd span: it starts as the instrumentor makes it
        logger.debug("spanbreaker could not read a LlamaIndex span at start", exc_info=True)
        attributes = None
    _local.attributes = attributes
    try:
        return wrapped(*args, **kwargs)
    except (Tripped, Steered) as stop:
        keep_stop(stop)
        raise
    finally:
        _local.attributes = None


class LlamaIndexAdapter(HookedAdapter):
    """Named after the instrumentor's entry point (``llama_index``), as every adapter is: naming it in
    ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` turns both off. An instrumentor the application switched on itself
    is kept; only the start hook and the stop are added."""

    name = "llama_index"
    framework = "llama_index.core"
    scope = SCOPE

    def patch(self, patches: PatchLog) -> None:
        from openinference.instrumentation.llama_index._handler import _SpanHandler

        STOP.hold(self.name, patches)
        patches.wrap(_SpanHandler, "new_span", _new_span)

    def make_instrumentor(self) -> Any:
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

        return LlamaIndexInstrumentor()


ADAPTER = LlamaIndexAdapter()
