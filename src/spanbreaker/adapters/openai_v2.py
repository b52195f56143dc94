"""OpenTelemetry's own OpenAI instrumentation (``opentelemetry-instrumentation-openai-v2``): the breaker reads each
chat request's messages in process, whatever the instrumentor's content capture says.

The instrumentor records a ``chat {model}`` span per ``chat.completions.create`` in the GenAI conventions: model,
token counts and finish reasons. By default it captures no message content (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_
MESSAGE_CONTENT`` unset), which is right for what leaves the process; but then a loop around the client was not read
at all, and only the budgets stopped one. With content on the span under ``gen_ai_latest_experimental`` the messages
come only when the call ends, so a loop with no span of the application's around it was seen but never stopped.
:mod:`._client_requests` shows the breaker each request as the span starts (measured on openai-v2 2.4b0 with
``opentelemetry-util-genai`` 1.1b0; ``tests/openai_v2``).
"""

from __future__ import annotations

from ._client_requests import ClientRequestsAdapter

PACKAGE = "opentelemetry.instrumentation.openai_v2"


class OpenAIV2Adapter(ClientRequestsAdapter):
    name = "openai_v2"
    framework = PACKAGE
    title = "OpenTelemetry's openai-v2 instrumentation"
    unguarded = ("a plain loop around the OpenAI client is read only where its messages are on the spans "
                 "(content capture on, and then only when each call ends)")


ADAPTER = OpenAIV2Adapter()
