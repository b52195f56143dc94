"""Fixtures for the pydantic-ai suite: pydantic-ai's own GenAI spans on a private provider, the breaker.

``make_env(version=N, **config)`` instruments every agent with pydantic-ai's data format ``N`` (5 is its
default; 2 is the deprecated format with ``tool_arguments`` / ``tool_response``) and restores the previous
setting at teardown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.models.instrumented import InstrumentationSettings

from spanbreaker.adapters.pydantic_ai import ADAPTER
from spanbreaker.instrumentation import uninstrument

from ..genai_rig import Rig, make_rig


@pytest.fixture
def make_env() -> Iterator[Callable[..., Rig]]:
    made: list[Rig] = []
    previous = Agent._instrument_default

    def make(version: int | None = None, **overrides: Any) -> Rig:
        assert not made, "one environment per test"
        uninstrument()
        rig = make_rig(**overrides)
        if version is None:
            ADAPTER.instrument(rig.provider, rig.processor)
        else:  # the application's own settings, as it would pass them
            Agent.instrument_all(InstrumentationSettings(tracer_provider=rig.provider, version=version))  # type: ignore[arg-type]
        made.append(rig)
        return rig

    yield make
    ADAPTER.uninstrument()
    Agent.instrument_all(previous)
    for rig in made:
        rig.provider.shutdown()


@pytest.fixture
def env(make_env: Callable[..., Rig]) -> Rig:
    return make_env()
