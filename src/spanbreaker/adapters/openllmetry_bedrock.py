"""OpenLLMetry's Bedrock instrumentation (Traceloop's ``opentelemetry-instrumentation-bedrock``): the breaker reads each
``converse`` (and Claude ``invoke_model``) request's messages as the call's span starts.

The instrumentor wraps each ``bedrock-runtime`` client as boto3 creates it, replacing its ``converse`` and
``invoke_model`` with plain closures built by module-level factories (``_instrumented_converse(fn, tracer, ...)``).
Their ``chat <model>`` span starts as a model call (its GenAI operation) and gets the request only when the call
returns, the messages only while content tracing is on (``TRACELOOP_TRACE_CONTENT``). So a plain loop around the client
was read only as each call ended: the seventh call was vetoed in a span of the application's, and with no span around
the loop (each model call a trace of its own) or with content off it ran to its own limit (measured on
opentelemetry-instrumentation-bedrock 0.62.4 with boto3 1.44.8).

Here the factories are wrapped: each closure they build shows the breaker the call's messages while it runs (as
:mod:`._client_requests` does for the clients wrapped with ``wrapt``; ``toolUse`` and ``toolResult`` blocks, or Claude's
``tool_use`` and ``tool_result`` in an ``invoke_model`` body given as text or bytes). Clients created after spanbreaker
instrumented (the launcher's order, and any client an application creates after ``spanbreaker.instrument()``) are
covered; one created before keeps the instrumentor's closure as it was.
"""

from __future__ import annotations

import functools
import importlib
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from ..private_calls import shown
from ._client_requests import Body, messages, request_call
from ._patching import PatchingAdapter
from .base import PatchLog

logger = logging.getLogger("spanbreaker")

PACKAGE = "opentelemetry.instrumentation.bedrock"


def invoke_messages(_args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Body | None:
    """The messages of an ``invoke_model`` body in Anthropic's Messages shape (Claude), given as text or bytes (a
    file-like body is the instrumentor's to read, once)."""
    body = kwargs.get("body")
    if not isinstance(body, str | bytes | bytearray):
        return None
    try:
        request = json.loads(body)
    except ValueError:
        return None
    return ("messages", request.get("messages")) if isinstance(request, dict) else None


FACTORIES: dict[str, tuple[Callable[[tuple[Any, ...], Mapping[str, Any]], Body | None], bool]] = {
    "_instrumented_converse": (messages, False),
    "_instrumented_async_converse": (messages, True),
    "_instrumented_model_invoke": (invoke_messages, False),
    "_instrumented_async_model_invoke": (invoke_messages, True),
}
"""The instrumentor's factories of a client's instrumented method -> (where the call's history is, asynchronous)."""


def showing_factory(stock: Callable[..., Any], body: Callable[[tuple[Any, ...], Mapping[str, Any]], Body | None],
                    asynchronous: bool) -> Callable[..., Any]:
    """The instrumentor's factory, the closures it builds showing the breaker each call's history while they run."""

    @functools.wraps(stock)
    def factory(*args: Any, **kwargs: Any) -> Any:
        instrumented = stock(*args, **kwargs)
        if asynchronous:
            @functools.wraps(instrumented)
            async def call_async(*call_args: Any, **call_kwargs: Any) -> Any:
                with shown(request_call(body, call_args, call_kwargs)):
                    return await instrumented(*call_args, **call_kwargs)
            return call_async

        @functools.wraps(instrumented)
        def call(*call_args: Any, **call_kwargs: Any) -> Any:
            with shown(request_call(body, call_args, call_kwargs)):
                return instrumented(*call_args, **call_kwargs)
        return call

    return factory


class OpenLLMetryBedrockAdapter(PatchingAdapter):
    name = "openllmetry_bedrock"
    framework = PACKAGE
    title = "OpenLLMetry's Bedrock instrumentation"
    unguarded = ("a plain loop around the bedrock-runtime client is read only when each call ends (and not at all with "
                 "TRACELOOP_TRACE_CONTENT=false)")

    def patch(self, patches: PatchLog) -> None:
        module = importlib.import_module(PACKAGE)
        if not callable(getattr(module, "_instrumented_converse", None)):
            raise RuntimeError(f"{PACKAGE} has no _instrumented_converse")
        for name, (body, asynchronous) in FACTORIES.items():
            stock = getattr(module, name, None)
            if callable(stock):
                patches.patch(module, name, showing_factory(stock, body, asynchronous))


ADAPTER = OpenLLMetryBedrockAdapter()
