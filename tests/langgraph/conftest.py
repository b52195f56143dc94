"""Fixtures for the LangGraph suite: a private TracerProvider per test, the real instrumentor, the breaker.

Nothing here touches the global tracer provider (other suites share the pytest process); the adapter is
uninstrumented in teardown so the next test starts clean.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from spanbreaker.adapters.langchain import ADAPTER
from tests.framework_env import FrameworkEnv, env_factory

from .scripted import RECURSION_LIMIT

MODES = ("sync", "async", "stream", "astream")
RUN_TIMEOUT_S = 30.0


LangGraphEnv = FrameworkEnv


@pytest.fixture
def make_env() -> Iterator[Callable[..., LangGraphEnv]]:
    """``make_env(**config_overrides)``: instrument LangChain on a fresh provider with a breaker of that config."""
    yield from env_factory(ADAPTER)


@pytest.fixture
def env(make_env: Callable[..., LangGraphEnv]) -> LangGraphEnv:
    return make_env()


def run(graph: Any, mode: str, question: str = "What's the weather?") -> Any:
    """Run a compiled graph in one of the four modes; return its final state (or the last streamed chunk)."""
    state = {"messages": [("user", question)]}
    config = {"recursion_limit": RECURSION_LIMIT}
    if mode == "sync":
        return graph.invoke(state, config)
    if mode == "stream":
        return list(graph.stream(state, config))[-1]
    if mode == "async":
        return asyncio.run(asyncio.wait_for(graph.ainvoke(state, config), RUN_TIMEOUT_S))

    async def consume() -> Any:
        return [chunk async for chunk in graph.astream(state, config)][-1]

    return asyncio.run(asyncio.wait_for(consume(), RUN_TIMEOUT_S))
