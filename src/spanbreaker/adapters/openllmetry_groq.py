"""OpenLLMetry's Groq instrumentation (Traceloop's ``opentelemetry-instrumentation-groq``): the breaker reads each chat
request's messages as the call's span starts.

The instrumentor starts a ``chat <model>`` span with its operation, provider and model, and puts the request's messages
on it (``gen_ai.input.messages``) just after, and only while content tracing is on
(``TRACELOOP_TRACE_CONTENT``). The breaker decides at start, so a plain loop around the client was read only as each
call ended: in a span of the application's the sixth call's end opened the breaker and the seventh was vetoed; with no
span around the loop (each model call a trace of its own) or with content off it ran to its own limit (measured on
opentelemetry-instrumentation-groq 0.62.4 with groq 1.7.0). :mod:`._client_requests` shows the breaker each request as
the span starts (Groq's messages are OpenAI's Chat Completions shape; ``tests/openllmetry/test_clients.py``).
"""

from __future__ import annotations

from ._client_requests import ClientMethod, ClientRequestsAdapter

PACKAGE = "opentelemetry.instrumentation.groq"
GROQ_CHAT = (ClientMethod("groq.resources.chat.completions", "Completions", "create", False),
             ClientMethod("groq.resources.chat.completions", "AsyncCompletions", "create", True))


class OpenLLMetryGroqAdapter(ClientRequestsAdapter):
    name = "openllmetry_groq"
    framework = PACKAGE
    instrumentor = "GroqInstrumentor"
    clients = GROQ_CHAT
    title = "OpenLLMetry's Groq instrumentation"
    unguarded = ("a plain loop around the Groq client is read only when each call ends (and not at all with "
                 "TRACELOOP_TRACE_CONTENT=false)")


ADAPTER = OpenLLMetryGroqAdapter()
