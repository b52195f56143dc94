"""LiteLLM adapter: OpenInference's LiteLLM instrumentor on the breaker's provider, its model-call spans saying
what they are when they start.

What this adapter fixes around (measured on litellm 1.110 with openinference-instrumentation-litellm 0.1.51; pinned
by ``tests/litellm/test_litellm.py``): the instrumentor starts each call's span under the function's name
(``completion``, ``acompletion``, ``responses``, ``messages.create``) with nothing on it, and sets the kind
(``LLM``), the model and the request just after. The breaker decides at start, so such a span was invisible to it:
no model call counted against a budget, no request read, nothing vetoed. Here the instrumentor's tracer gets, at
start, the attributes the instrumentor itself computes from the call (its own extractor, run on a stand-in span),
so a model call counts when it starts and a loop read from its request is vetoed before the request is sent.
``Tripped`` (a ``BaseException``) passes LiteLLM's ``except Exception`` and comes out of ``litellm.completion``.

``completion_with_retries`` is left as the instrumentor makes it: it calls ``completion``, whose span is the model
call. LiteLLM called under a framework that traces its own model calls (a smolagents ``LiteLLMModel``, CrewAI)
makes a model span inside the framework's; the breaker counts that call once, as the framework's (engine).

Everything LiteLLM-specific stays in this module; LiteLLM is imported only when instrumenting, and not before the
application imports it (:mod:`._deferred`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ._hooked import HookedAdapter
from .base import AttributeRecorder, PatchLog, PendingAttributes, StartAttributes

logger = logging.getLogger("spanbreaker")

SCOPE = "openinference.instrumentation.litellm"
"""The instrumentor's module, and the instrumentation scope of its spans."""
_PENDING = PendingAttributes("spanbreaker_litellm_start")
"""The start attributes of the call whose span is about to start (:class:`~.base.PendingAttributes`)."""


def _start_attributes(extract: Callable[[Any, dict[str, Any]], None],
                      arguments: dict[str, Any]) -> dict[str, Any] | None:
    try:
        recorder = AttributeRecorder()
        extract(recorder, arguments)
        return recorder.attributes or None
    except Exception:  # an odd call: its span starts as the instrumentor makes it
        logger.debug("spanbreaker could not read a LiteLLM call at start", exc_info=True)
        return None


def _wrapper(extract_name: str, anthropic: str | None, asynchronous: bool) -> Callable[..., Any]:
    """A wrapper around one of the instrumentor's methods: the call's start attributes pending while it runs.
    ``anthropic``: the name of the LiteLLM function whose signature binds the call's arguments (the instrumentor's
    Anthropic-style wrappers take them positionally)."""

    def attributes(instrumentor: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | None:
        from openinference.instrumentation import litellm as module

        tracer = getattr(instrumentor, "_tracer", None)
        if tracer is not None and not isinstance(tracer, StartAttributes):  # a tracer made by the stock instrument()
            instrumentor._tracer = StartAttributes(tracer, _PENDING)
        arguments = kwargs
        if anthropic is not None:
            signature = getattr(instrumentor, "original_anthropic_signatures", {}).get(anthropic)
            arguments = module._bind_anthropic_messages_arguments(signature, args, kwargs)
        return _start_attributes(getattr(module, extract_name), arguments)

    return _PENDING.around(attributes, asynchronous)


WRAPPED = {
    "_completion_wrapper": ("_instrument_func_type_completion", None, False),
    "_acompletion_wrapper": ("_instrument_func_type_completion", None, True),
    "_responses_wrapper": ("_instrument_func_type_responses", None, False),
    "_aresponses_wrapper": ("_instrument_func_type_responses", None, True),
    "_create_wrapper": ("_instrument_func_type_anthropic_messages", "create", False),
    "_acreate_wrapper": ("_instrument_func_type_anthropic_messages", "acreate", True),
}
"""The instrumentor's methods that start a model call's span -> (its extractor, the Anthropic-style function whose
signature binds the arguments, whether the method is a coroutine function)."""


class LiteLLMAdapter(HookedAdapter):
    name = "litellm"
    framework = "litellm"
    scope = SCOPE

    def patch(self, patches: PatchLog) -> None:
        from openinference.instrumentation.litellm import LiteLLMInstrumentor

        for method, (extract, anthropic, asynchronous) in WRAPPED.items():
            if method in vars(LiteLLMInstrumentor):
                patches.wrap(LiteLLMInstrumentor, method, _wrapper(extract, anthropic, asynchronous))

    def make_instrumentor(self) -> Any:
        import litellm
        from openinference.instrumentation.litellm import LiteLLMInstrumentor

        instrumentor = LiteLLMInstrumentor()
        if instrumentor.is_instrumented_by_opentelemetry and type(getattr(litellm, "completion", None)) is not type(
                instrumentor._completion_wrapper):
            # Switched on before the patches: LiteLLM holds the instrumentor's methods as they were then. Switch it
            # off; the adapter switches it on again, patched, on the breaker's provider (as the Agents SDK's does).
            instrumentor.uninstrument()
        return instrumentor

    def instrumenting(self, instrumentor: Any) -> bool:
        """The launcher's ``LiteLLMInstrumentor().instrument()`` imports LiteLLM from its ``_instrument``: that
        import ran this adapter, and the ``_instrument`` under way binds LiteLLM's functions to the patched methods
        right after it (switching it on again from here would make it wrap its own wrappers)."""
        return self.instrument_under_way(instrumentor)


ADAPTER = LiteLLMAdapter()
