"""Fixtures for the AutoGen tier (``make test-autogen``, its own venv): AutoGen's own spans on a private provider per
test, the breaker, the AutoGen adapter on or off, OpenInference's OpenAI instrumentor for the model calls.

AutoGen takes its tracer from the global provider on every span (``trace_tool_span``, ``trace_invoke_agent_span``),
and the global provider can be set only once per process. So the session sets one global provider, a switchboard
whose tracers start every span on the current test's own SDK provider (``genai_rig.make_rig``: the breaker, an
exporter, a ledger), as the Google ADK tier does; OpenInference's OpenAI instrumentor is switched on once, on that
switchboard, and makes the model-call spans under ``OpenAIChatCompletionClient`` (AutoGen makes none itself).

``make_env(adapter=True, **config)``: ``adapter`` switches spanbreaker's AutoGen adapter on (what
``spanbreaker.instrument()`` does) or leaves AutoGen stock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from spanbreaker.adapters.autogen import ADAPTER

from ..genai_rig import Rig, Switchboard, global_switchboard, switchboard_rigs


@pytest.fixture(scope="session")
def switchboard() -> Iterator[Switchboard]:
    from openinference.instrumentation.openai import OpenAIInstrumentor

    board = global_switchboard("AutoGen")
    OpenAIInstrumentor().instrument(tracer_provider=board)
    yield board
    OpenAIInstrumentor().uninstrument()


@pytest.fixture
def make_env(switchboard: Switchboard) -> Iterator[Callable[..., Rig]]:
    with switchboard_rigs(switchboard, ADAPTER) as make:
        yield make
