"""OpenLIT's OpenAI instrumentation (``openlit.init()`` switches it on): the breaker reads each chat request's
messages as the call's span starts.

OpenLIT starts a ``chat <model>`` span bare and sets everything (model, usage, ``gen_ai.input.messages``) when the
call returns. Its messages also leave out every assistant message that carries only tool calls (no text), so even
at the end no request shows which calls the model asked for, only their results: a plain loop around the client
ran its 30 turns with or without a span of the application's around it (measured on openlit 1.45.0 with openai
2.54). :mod:`._client_requests` shows the breaker each request's messages as the client sends them, as the span
starts: the sixth identical request is vetoed before it is sent, content capture on or off (``tests/openlit_init``).
"""

from __future__ import annotations

from ._openlit import OPENLIT, OpenLITClientAdapter

PACKAGE = f"{OPENLIT}.instrumentation.openai"


class OpenLITOpenAIAdapter(OpenLITClientAdapter):
    name = "openlit_openai"
    framework = PACKAGE
    title = "OpenLIT's OpenAI instrumentation"
    unguarded = "a plain loop around the OpenAI client is not read (OpenLIT records no assistant tool calls)"


ADAPTER = OpenLITOpenAIAdapter()
