"""DSPy adapter: OpenInference's DSPy instrumentor on the breaker's provider, its tool spans named after the tool
and its model-call spans carrying the usage DSPy recorded.

What the stock instrumentor already gives (measured on dspy 3.4.1 with openinference-instrumentation-dspy 0.1.48;
pinned by ``tests/dspy/test_conformance.py``): a ``dspy.Tool`` call's span (``<tool>.__call__`` / ``<tool>.acall``)
starts with its kind (``TOOL``) and its arguments (``input.value``, ``{"kwargs": {...}}``) and ends with its result;
an ``LM.__call__`` / ``LM.acall`` span starts with its kind (``LLM``) and its messages. ``dspy.ReAct`` catches only
``Exception`` around a tool and DSPy's callbacks re-raise whatever they saw, so ``Tripped`` (a ``BaseException``)
raised where a tool or model span starts comes out of ``react(...)`` / ``await react.acall(...)`` unchanged. So this
adapter adds no stop path; it fills two gaps:

* **the tool's name**: the instrumentor sets no ``tool.name``, and the breaker would name the call after the span,
  ``search.__call__`` in a sync run and ``search.acall`` in an async one: per-tool policies (``tools``,
  ``allowlist``) written for ``search`` would never apply. The adapter starts each tool span with
  ``tool.name`` = the ``dspy.Tool``'s own name.
* **the usage**: an LM span ends with the completion texts only (``LM.__call__`` returns strings), no token counts,
  so the token and cost budgets never saw a DSPy model call. (LiteLLM's span under it, when DSPy routes the call
  through LiteLLM, has them; but a model span inside a model span is one call, counted as the outer one, and DSPy's
  own native engine makes no such span.) The adapter puts on the LM span the usage DSPy itself records for the call
  (``dspy.clients.execution.finalize``, where DSPy feeds its usage tracker and history), before the span ends.

Everything DSPy-specific stays in this module; DSPy is imported only when instrumenting, and not before the
application imports it (:mod:`._deferred`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ._hooked import HookedAdapter
from .base import PatchLog, PendingAttributes, StartAttributes

logger = logging.getLogger("spanbreaker")

SCOPE = "openinference.instrumentation.dspy"
"""The instrumentor's module, and the instrumentation scope of its spans."""
TOOL_NAME = "tool.name"
KIND = "openinference.span.kind"
USAGE_KEYS = (("prompt_tokens", "llm.token_count.prompt"), ("completion_tokens", "llm.token_count.completion"),
              ("total_tokens", "llm.token_count.total"))
"""DSPy's usage dict (OpenAI's names, whatever the engine) -> OpenInference's token-count attributes."""
COST = "llm.cost.total"

_PENDING = PendingAttributes("spanbreaker_dspy_start")
"""The start attributes of the call whose span is about to start (:class:`~.base.PendingAttributes`)."""


def _tool_attributes(wrapper: Any, args: tuple[Any, ...]) -> dict[str, Any] | None:
    """``tool.name`` for the ``dspy.Tool`` the instrumentor's wrapper is about to trace (its ``instance``
    argument); the wrapper's tracer made to add it at start."""
    tracer = getattr(wrapper, "_tracer", None)
    if tracer is not None and not isinstance(tracer, StartAttributes):
        wrapper._tracer = StartAttributes(tracer, _PENDING)
    tool = args[1] if len(args) > 1 else None
    name = getattr(tool, "name", None)
    return {TOOL_NAME: name} if isinstance(name, str) and name else None


def _tool_wrapper(asynchronous: bool) -> Callable[..., Any]:
    """A wrapper around the instrumentor's tool wrapper (``_ToolCallWrapper.__call__`` /
    ``_AsyncToolCallWrapper.__call__``): the tool's name pending while it starts the span."""
    return _PENDING.around(lambda wrapper, args, kwargs: _tool_attributes(wrapper, args), asynchronous)


def _usage_attributes(result: Any) -> dict[str, Any]:
    """The token counts (and cost, when DSPy knows it) of one DSPy ``CallResult``; nothing for a cache hit, which
    bills nothing (DSPy records its usage as empty)."""
    if getattr(result, "cache_hit", False):
        return {}
    usage = getattr(result, "usage", None)
    attributes: dict[str, Any] = {}
    if isinstance(usage, dict):
        for key, attribute in USAGE_KEYS:
            value = usage.get(key)
            if type(value) is int and value >= 0:
                attributes[attribute] = value
    cost = getattr(result, "cost", None)
    if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
        attributes[COST] = float(cost)
    return attributes


def _finalize(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Around ``dspy.clients.execution.finalize(lm, call, result)``, which runs inside the LM span: the call's usage
    on that span (only when the current span is the DSPy instrumentor's model-call span, and only what it lacks)."""
    try:
        result = args[2] if len(args) > 2 else kwargs.get("result")
        attributes = _usage_attributes(result)
        if attributes:
            from opentelemetry import trace

            span = trace.get_current_span()
            scope = getattr(getattr(span, "instrumentation_scope", None), "name", None)
            present = getattr(span, "attributes", None) or {}
            if scope == SCOPE and present.get(KIND) == "LLM" and span.is_recording():
                span.set_attributes({key: value for key, value in attributes.items() if key not in present})
    except Exception:  # an odd result: the span ends as the instrumentor makes it
        logger.debug("spanbreaker could not read a DSPy model call's usage", exc_info=True)
    return wrapped(*args, **kwargs)


class DSPyAdapter(HookedAdapter):
    name = "dspy"
    framework = "dspy"
    scope = SCOPE

    def patch(self, patches: PatchLog) -> None:
        from openinference.instrumentation import dspy as module

        for cls_name, asynchronous in (("_ToolCallWrapper", False), ("_AsyncToolCallWrapper", True)):
            cls = getattr(module, cls_name, None)
            if cls is not None and "__call__" in vars(cls):
                patches.wrap(cls, "__call__", _tool_wrapper(asynchronous))
        try:
            from dspy.clients import execution
        except ImportError:  # a DSPy before its execution layer (3.3 and older): no usage on the LM spans
            return
        if callable(getattr(execution, "finalize", None)):
            patches.wrap(execution, "finalize", _finalize)

    def make_instrumentor(self) -> Any:
        from openinference.instrumentation.dspy import DSPyInstrumentor

        return DSPyInstrumentor()

    def instrumenting(self, instrumentor: Any) -> bool:
        """The launcher's ``DSPyInstrumentor().instrument()`` imports DSPy from its ``_instrument``: that import ran
        this adapter, and the ``_instrument`` under way finishes switching the instrumentor on (switching it on
        again from here would wrap DSPy twice). The patches above are on the instrumentor's classes and DSPy's
        module, so they hold for the wrappers it is making."""
        return self.instrument_under_way(instrumentor)


ADAPTER = DSPyAdapter()
