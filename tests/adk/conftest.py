"""Fixtures for the Google ADK tier (``make test-adk``, its own venv): stock ADK spans on a private provider per
test, the breaker, content capture on or off.

ADK takes its tracer once, at import, from the global provider (``google.adk.telemetry.tracing.tracer``, a
``ProxyTracer``; several ADK modules import that object by name), and the global provider can be set only once
per process. So the session sets one global provider, a switchboard whose tracers start every span on the current
test's own SDK provider (``genai_rig.make_rig``: the breaker, an exporter, a ledger): each test sees only its own
spans on its own breaker, and nothing of ADK is patched.

``make_env(capture, adapter=False, **config)``: ``capture`` is ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``
(``"SPAN_ONLY"``, or ``None`` for ADK's default, no content on spans); ADK reads it when a run starts. ``adapter``
switches spanbreaker's ADK adapter on (what ``spanbreaker.instrument()`` does: each tool call shown to the breaker
in process when it starts); off, ADK runs stock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from spanbreaker.adapters.google_adk import ADAPTER

from ..genai_rig import Rig, Switchboard, global_switchboard, switchboard_rigs

CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


@pytest.fixture(scope="session")
def switchboard() -> Switchboard:
    return global_switchboard("ADK")


@pytest.fixture
def make_env(switchboard: Switchboard, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Rig]]:
    with switchboard_rigs(switchboard, ADAPTER) as make_rig_for:

        def make(capture: str | None = "SPAN_ONLY", adapter: bool = False, **overrides: Any) -> Rig:
            if capture is None:
                monkeypatch.delenv(CAPTURE, raising=False)
            else:
                monkeypatch.setenv(CAPTURE, capture)
            return make_rig_for(adapter, **overrides)

        yield make
