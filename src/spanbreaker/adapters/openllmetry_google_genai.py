"""OpenLLMetry's Google Gen AI instrumentation (Traceloop's ``opentelemetry-instrumentation-google-generativeai``, which
instruments the ``google-genai`` client): the breaker reads each request's contents as the call's span starts.

The instrumentor starts a ``generate_content <model>`` span with its operation, provider and model, and puts the
request's contents on it (``gen_ai.input.messages``) just after, only while content tracing is on
(``TRACELOOP_TRACE_CONTENT``). The breaker decides at start, so a plain loop around the client was read only as each
call ended: in a span of the application's the seventh call was vetoed; with no span around the loop or with content off
it ran to its own limit (measured on opentelemetry-instrumentation-google-generativeai 0.62.4 with google-genai 3.6.1).
:mod:`._client_requests` shows the breaker each request's ``contents`` as the span starts (Gemini's shape:
``function_call`` and ``function_response`` parts; ``tests/openllmetry/test_clients.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._client_requests import Body, ClientMethod, ClientRequestsAdapter

PACKAGE = "opentelemetry.instrumentation.google_generativeai"


def contents(_args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Body | None:
    """The history of a ``generate_content`` call: its ``contents`` keyword (the SDK takes keywords only)."""
    return "contents", kwargs.get("contents")


GENAI_MODELS = tuple(ClientMethod("google.genai.models", owner, method, owner == "AsyncModels", contents)
                     for owner in ("Models", "AsyncModels")
                     for method in ("generate_content", "generate_content_stream"))


class OpenLLMetryGoogleGenAIAdapter(ClientRequestsAdapter):
    name = "openllmetry_google_genai"
    framework = PACKAGE
    instrumentor = "GoogleGenerativeAiInstrumentor"
    clients = GENAI_MODELS
    title = "OpenLLMetry's Google Gen AI instrumentation"
    unguarded = ("a plain loop around the Google Gen AI client is read only when each call ends (and not at all with "
                 "TRACELOOP_TRACE_CONTENT=false)")


ADAPTER = OpenLLMetryGoogleGenAIAdapter()
