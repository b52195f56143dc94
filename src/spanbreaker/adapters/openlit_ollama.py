"""OpenLIT's Ollama instrumentation (``openlit.init()`` switches it on): the breaker reads each ``chat`` request's
messages as the call's span starts.

OpenLIT wraps the client's one request method (``Client._request``) and sets the request on its span only when the
call returns (measured on openlit 1.45.0 with ollama 0.6.3), so a plain loop around the client was read only as each
call ended, if at all. :mod:`._client_requests` shows the breaker each chat request as the span starts
(``tests/openlit_init``).
"""

from __future__ import annotations

from ._openlit import OPENLIT, OpenLITClientAdapter
from .openllmetry_ollama import OLLAMA_REQUESTS

PACKAGE = f"{OPENLIT}.instrumentation.ollama"


class OpenLITOllamaAdapter(OpenLITClientAdapter):
    name = "openlit_ollama"
    framework = PACKAGE
    instrumentor = "OllamaInstrumentor"
    clients = OLLAMA_REQUESTS
    title = "OpenLIT's Ollama instrumentation"
    unguarded = "a plain loop around the Ollama client is read only when each call ends, if at all"


ADAPTER = OpenLITOllamaAdapter()
