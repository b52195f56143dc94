"""OpenLLMetry's Ollama instrumentation (Traceloop's ``opentelemetry-instrumentation-ollama``): the breaker reads each
chat request's messages as the call's span starts.

The instrumentor wraps the client's one request method (``Client._request`` and ``AsyncClient._request``, dispatching on
the path) and starts an ``ollama.chat`` span with only ``gen_ai.system`` and ``llm.request.type``; the messages follow
just after, flattened (``gen_ai.prompt.N.*``), only while content tracing is on (``TRACELOOP_TRACE_CONTENT``). Stock,
the breaker saw no model call (the span's kind is its ``llm.request.type``, which the breaker now reads,
:mod:`spanbreaker.conventions.openllmetry`) and no request: a plain loop ran to its own limit and no budget counted a
call (measured on opentelemetry-instrumentation-ollama 0.62.4 with ollama 0.6.3). :mod:`._client_requests` shows the
breaker each ``/api/chat`` request's messages as the span starts (Ollama's own shape, read by
:mod:`spanbreaker.conventions.prompt_calls`; ``tests/openllmetry/test_clients.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._client_requests import Body, ClientMethod, ClientRequestsAdapter

PACKAGE = "opentelemetry.instrumentation.ollama"
CHAT_PATH = "/api/chat"


def chat_messages(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Body | None:
    """The messages of a ``_request(cls, method, path, json=...)`` to ``/api/chat``; None for any other request."""
    path = args[2] if len(args) > 2 else kwargs.get("path")
    body = kwargs.get("json")
    if not isinstance(path, str) or not path.rstrip("/").endswith(CHAT_PATH) or not isinstance(body, Mapping):
        return None
    return "messages", body.get("messages")


OLLAMA_REQUESTS = (ClientMethod("ollama._client", "Client", "_request", False, chat_messages),
                   ClientMethod("ollama._client", "AsyncClient", "_request", True, chat_messages))


class OpenLLMetryOllamaAdapter(ClientRequestsAdapter):
    name = "openllmetry_ollama"
    framework = PACKAGE
    instrumentor = "OllamaInstrumentor"
    clients = OLLAMA_REQUESTS
    title = "OpenLLMetry's Ollama instrumentation"
    unguarded = "a plain loop around the Ollama client is not read (its requests reach the spans only after they start)"


ADAPTER = OpenLLMetryOllamaAdapter()
