"""Fixtures for the OpenAI Agents SDK suite: the real SDK, the real OpenInference instrumentor, the breaker.

Each test gets its own provider; the instrumentor is moved to it and removed again at teardown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from spanbreaker.adapters.openai_agents import ADAPTER
from spanbreaker.instrumentation import uninstrument

from ..genai_rig import Rig, make_rig


@pytest.fixture
def make_env() -> Iterator[Callable[..., Rig]]:
    made: list[Rig] = []

    def make(**overrides: Any) -> Rig:
        assert not made, "one environment per test"
        uninstrument()  # a suite that left frameworks instrumented on its own provider
        rig = make_rig(**overrides)
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
