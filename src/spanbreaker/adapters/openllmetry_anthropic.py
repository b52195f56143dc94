"""OpenLLMetry's Anthropic instrumentation (Traceloop's ``opentelemetry-instrumentation-anthropic``, what
``Traceloop.init()`` switches on): the breaker reads each ``messages.create`` request as the call's span starts.

The instrumentor starts an ``anthropic.chat`` span with only its provider and operation, and sets the request (model,
``gen_ai.input.messages``) just after, the messages only while content tracing is on (``TRACELOOP_TRACE_CONTENT``, its
default). The breaker decides at start, so a plain loop around the client was read only as each call ended: never
stopped with no span of the application's around it, never read with content off. :mod:`._client_requests` shows the
breaker each request's messages (``tool_use`` and ``tool_result`` blocks) as the span starts (measured on
opentelemetry-instrumentation-anthropic 0.62.4; ``tests/openllmetry``).
"""

from __future__ import annotations

from ._client_requests import ANTHROPIC_MESSAGES, ClientRequestsAdapter

PACKAGE = "opentelemetry.instrumentation.anthropic"


class OpenLLMetryAnthropicAdapter(ClientRequestsAdapter):
    name = "openllmetry_anthropic"
    framework = PACKAGE
    instrumentor = "AnthropicInstrumentor"
    clients = ANTHROPIC_MESSAGES
    title = "OpenLLMetry's Anthropic instrumentation"
    unguarded = ("a plain loop around the Anthropic client is read only when each call ends (and not at all with "
                 "TRACELOOP_TRACE_CONTENT=false)")


ADAPTER = OpenLLMetryAnthropicAdapter()
