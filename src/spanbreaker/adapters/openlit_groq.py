"""OpenLIT's Groq instrumentation (``openlit.init()`` switches it on): the breaker reads each chat request's messages
as the call's span starts.

OpenLIT starts a ``chat <model>`` span bare and sets the request only when the call returns (measured on openlit 1.45.0
with groq 1.7.0), so a plain loop around the client was read only as each call ended, if at all.
:mod:`._client_requests` shows the breaker each request as the span starts (Groq's messages are OpenAI's Chat
Completions shape; ``tests/openlit_init``).
"""

from __future__ import annotations

from ._openlit import OPENLIT, OpenLITClientAdapter
from .openllmetry_groq import GROQ_CHAT

PACKAGE = f"{OPENLIT}.instrumentation.groq"


class OpenLITGroqAdapter(OpenLITClientAdapter):
    name = "openlit_groq"
    framework = PACKAGE
    instrumentor = "GroqInstrumentor"
    clients = GROQ_CHAT
    title = "OpenLIT's Groq instrumentation"
    unguarded = "a plain loop around the Groq client is read only when each call ends, if at all"


ADAPTER = OpenLITGroqAdapter()
