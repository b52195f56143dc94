"""Fixtures for the LlamaIndex suite: a private TracerProvider per test, the real instrumentor, the breaker.

Nothing here touches the global tracer provider (other suites share the pytest process); the adapter is
uninstrumented in teardown so the next test starts clean.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from spanbreaker.adapters.llama_index import ADAPTER
from tests.framework_env import FrameworkEnv, env_factory

LlamaIndexEnv = FrameworkEnv


@pytest.fixture
def make_env() -> Iterator[Callable[..., LlamaIndexEnv]]:
    """``make_env(**config_overrides)``: instrument LlamaIndex on a fresh provider with a breaker of that config."""
    yield from env_factory(ADAPTER)


@pytest.fixture
def env(make_env: Callable[..., LlamaIndexEnv]) -> LlamaIndexEnv:
    return make_env()
