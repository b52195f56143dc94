"""Fixtures for the Strands suite: Strands' own GenAI spans on a private provider, the breaker, the adapter.

``make_env(mode, **config)``: ``mode`` is Strands' telemetry setting, read from ``OTEL_SEMCONV_STABILITY_OPT_IN``
when its tracer is made (``"default"``; ``"latest"`` for ``gen_ai_latest_experimental``; ``"redacted"`` for
Strands' redaction of every sensitive attribute, ``gen_ai_unredacted_attributes=``). Strands keeps one tracer per
process, on the provider that was global when it was made; each environment makes a fresh one under its setting, on
the environment's provider (the global one is never touched), and puts the previous one back at teardown.
``instrument=False``: stock Strands, no adapter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from strands.telemetry import tracer as strands_tracer

from spanbreaker.adapters.strands import ADAPTER, SCOPE
from spanbreaker.instrumentation import uninstrument

from ..genai_rig import Rig, make_rig

OPT_IN = {"default": None, "latest": "gen_ai_latest_experimental",
          "redacted": "gen_ai_latest_experimental,gen_ai_unredacted_attributes=",
          "redacted-default": "gen_ai_unredacted_attributes="}


@pytest.fixture
def make_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Rig]]:
    made: list[Rig] = []

    def make(mode: str = "default", instrument: bool = True, **overrides: Any) -> Rig:
        assert not made, "one environment per test"
        uninstrument()
        if OPT_IN[mode] is None:
            monkeypatch.delenv("OTEL_SEMCONV_STABILITY_OPT_IN", raising=False)
        else:
            monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", OPT_IN[mode])
        rig = make_rig(**overrides)
        tracer = strands_tracer.Tracer()
        tracer.tracer = rig.provider.get_tracer(SCOPE)  # as if the rig's provider were the global one
        monkeypatch.setattr(strands_tracer, "_tracer_instance", tracer)
        if instrument:
            ADAPTER.instrument(rig.provider, rig.processor)
        made.append(rig)
        return rig

    yield make
    ADAPTER.uninstrument()
    for rig in made:
        rig.provider.shutdown()


@pytest.fixture
def env(make_env: Callable[..., Rig]) -> Rig:
    return make_env()
