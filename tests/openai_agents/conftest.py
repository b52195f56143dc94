"""Fixtures for the OpenAI Agents SDK suite: the real SDK, the real OpenInference instrumentor, the breaker.

Each test gets its own provider; the instrumentor is moved to it and removed again at teardown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from spanbreaker.adapters.openai_agents import ADAPTER

from ..genai_rig import Rig, adapter_rigs


@pytest.fixture
def make_env() -> Iterator[Callable[..., Rig]]:
    with adapter_rigs(ADAPTER) as make:
        yield make


@pytest.fixture
def env(make_env: Callable[..., Rig]) -> Rig:
    return make_env()
