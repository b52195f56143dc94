"""OpenLIT's Google Gen AI instrumentation (``openlit.init()`` switches it on, as "google_ai_studio"): the breaker
reads each ``generate_content`` request's contents as the call's span starts.

OpenLIT starts a ``chat <model>`` span bare and sets the request only when the call returns (measured on openlit 1.45.0
with google-genai 3.6.1), so a plain loop around the client was read only as each call ended, if at all.
:mod:`._client_requests` shows the breaker each request's ``contents`` as the span starts (``tests/openlit_init``).
"""

from __future__ import annotations

from ._openlit import OPENLIT, OpenLITClientAdapter
from .openllmetry_google_genai import GENAI_MODELS

PACKAGE = f"{OPENLIT}.instrumentation.google_ai_studio"


class OpenLITGoogleGenAIAdapter(OpenLITClientAdapter):
    name = "openlit_google_genai"
    framework = PACKAGE
    instrumentor = "GoogleAIStudioInstrumentor"
    clients = GENAI_MODELS
    title = "OpenLIT's Google Gen AI instrumentation"
    unguarded = "a plain loop around the Google Gen AI client is read only when each call ends, if at all"


ADAPTER = OpenLITGoogleGenAIAdapter()
