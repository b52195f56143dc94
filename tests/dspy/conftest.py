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

from spanbreaker.adapters.dspy import ADAPTER

from ..genai_rig import Rig, adapter_rigs


@pytest.fixture
def make_dspy_rig() -> Iterator[Callable[..., Rig]]:
    with adapter_rigs(ADAPTER) as make:
        yield make


@pytest.fixture
def rig(make_dspy_rig: Callable[..., Rig]) -> Rig:
    return make_dspy_rig()
