"""OpenLIT's Anthropic instrumentation (``openlit.init()`` switches it on): the breaker reads each
``messages.create`` request as the call's span starts.

OpenLIT starts a ``chat <model>`` span bare and sets the request only when the call returns, so a plain loop around
the client was read only as each call ended: never stopped with no span of the application's around it, never read
with content capture off (measured on openlit 1.45.0 with anthropic 0.125). :mod:`._client_requests` shows the breaker
each request's messages (``tool_use`` and ``tool_result`` blocks) as the span starts (``tests/openlit_init``).
"""

from __future__ import annotations

from ._client_requests import ANTHROPIC_MESSAGES
from ._openlit import OPENLIT, OpenLITClientAdapter

PACKAGE = f"{OPENLIT}.instrumentation.anthropic"


class OpenLITAnthropicAdapter(OpenLITClientAdapter):
    name = "openlit_anthropic"
    framework = PACKAGE
    instrumentor = "AnthropicInstrumentor"
    clients = ANTHROPIC_MESSAGES
    title = "OpenLIT's Anthropic instrumentation"
    unguarded = ("a plain loop around the Anthropic client is read only when each call ends (and not at all with "
                 "content capture off)")


ADAPTER = OpenLITAnthropicAdapter()
