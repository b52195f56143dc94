"""OpenLLMetry's OpenAI instrumentation (Traceloop's ``opentelemetry-instrumentation-openai``, also what
``Traceloop.init()`` switches on): the breaker reads each chat request's messages as the call's span starts.

The instrumentor starts an ``openai.chat`` span with nothing on it but ``gen_ai.operation.name`` and sets the request
(model, ``gen_ai.input.messages``) just after, and the messages only while content tracing is on
(``TRACELOOP_TRACE_CONTENT``, on by default). The breaker decides at start, so a plain loop around the client was read
only when each call ended: in a span of the application's the sixth call's end opened the breaker and the seventh was
vetoed; with no span around the loop (each model call a trace of its own) it was never stopped, and with content off
never read. :mod:`._client_requests` shows the breaker each request as the span starts (measured on
opentelemetry-instrumentation-openai 0.62.4; ``tests/openllmetry``).
"""

from __future__ import annotations

from ._client_requests import ClientRequestsAdapter

PACKAGE = "opentelemetry.instrumentation.openai"


class OpenLLMetryOpenAIAdapter(ClientRequestsAdapter):
    name = "openllmetry_openai"
    framework = PACKAGE
    title = "OpenLLMetry's OpenAI instrumentation"
    unguarded = ("a plain loop around the OpenAI client is read only when each call ends (and not at all with "
                 "TRACELOOP_TRACE_CONTENT=false)")


ADAPTER = OpenLLMetryOpenAIAdapter()
