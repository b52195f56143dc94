"""Fixtures for the Haystack suite: a private TracerProvider per test, Haystack's real ``Agent`` and
``OpenAIChatGenerator`` under OpenInference's Haystack instrumentor through spanbreaker's adapter (or stock).

Haystack sends anonymous usage telemetry when a pipeline or agent runs unless told not to: these tests run offline.
"""

from __future__ import annotations

import os

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

from collections.abc import Callable, Iterator

import pytest

from spanbreaker.adapters.haystack import ADAPTER

from ..genai_rig import Rig, adapter_rigs


@pytest.fixture
def make_env() -> Iterator[Callable[..., Rig]]:
    with adapter_rigs(ADAPTER) as make:
        yield make


@pytest.fixture
def env(make_env: Callable[..., Rig]) -> Rig:
    return make_env()
