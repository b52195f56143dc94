"""Fixtures for the openai-v2 tier (``make test-openai-v2``, its own venv): OpenTelemetry's own OpenAI instrumentor
(``opentelemetry-instrumentation-openai-v2``) on a private provider with the breaker, in each of its modes.

The instrumentor reads its mode when it instruments (``OTEL_SEMCONV_STABILITY_OPT_IN``, cached by the
instrumentation package until reset here) and its content capture on every call
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``); both are set per test. Everything is uninstrumented in
teardown so the next test starts clean.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry.instrumentation._semconv import _OpenTelemetrySemanticConventionStability
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

from spanbreaker.adapters.openai_v2 import ADAPTER

from ..genai_rig import Rig, instrumentor_rigs

MODES = {
    "default": {},
    "latest, no content": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"},
    "latest, content on spans": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                                 "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
    "default, content in events": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
}
"""The instrumentor's modes: its default (the GenAI conventions of semconv 1.30, no content), the latest experimental
conventions without and with message content on the spans, and the default with content in log events."""
CONTENT_OFF = ("default", "latest, no content")


def set_mode(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    for name in ("OTEL_SEMCONV_STABILITY_OPT_IN", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in MODES[mode].items():
        monkeypatch.setenv(name, value)
    # The instrumentation package reads the opt-in once per process: read it again for this test's mode.
    monkeypatch.setattr(_OpenTelemetrySemanticConventionStability, "_initialized", False)


@pytest.fixture
def instrumented(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Rig]]:
    """``make(mode, openai_first=False)``: a rig with the breaker's adapter and the instrumentor on, in that order
    (or the instrumentor first, as an application that instrumented it before spanbreaker)."""
    with instrumentor_rigs(ADAPTER, OpenAIInstrumentor) as rig_for:

        def make(mode: str = "default", openai_first: bool = False, **config: Any) -> Rig:
            set_mode(monkeypatch, mode)
            return rig_for(openai_first, **config)

        yield make
