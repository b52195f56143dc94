"""Fixtures for the DSPy suite: a private TracerProvider per test (the global one is never touched), the real DSPy
instrumentor through spanbreaker's adapter, and the scripted model served on loopback for DSPy's real engine.

LiteLLM (DSPy's ``engine="litellm"`` route) reads its price map from the network when imported unless told to use
the copy it ships: these tests run offline.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from collections.abc import Callable, Iterator

import pytest

import spanbreaker
from spanbreaker.adapters.dspy import ADAPTER

from ..genai_rig import Rig, make_rig


@pytest.fixture
def make_dspy_rig() -> Iterator[Callable[..., Rig]]:
    """``make_dspy_rig(**config_overrides)``: the adapter on a fresh provider with a breaker of that config."""
    made: list[Rig] = []

    def make(**overrides: object) -> Rig:
        assert not made, "one rig per test"
        spanbreaker.instrumentation.uninstrument()  # a suite that left frameworks instrumented on its provider
        rig = make_rig(**overrides)
        ADAPTER.instrument(rig.provider, rig.processor)
        made.append(rig)
        return rig

    yield make
    ADAPTER.uninstrument()
    for rig in made:
        rig.provider.shutdown()


@pytest.fixture
def rig(make_dspy_rig: Callable[..., Rig]) -> Rig:
    return make_dspy_rig()
