"""Streamed Chat Completions under the OpenInference OpenAI instrumentor (its span ends when the stream is read to its
end): a loop is stopped where a loop of plain calls is, tokens are counted as the streams end, nothing is lost, a feed
of news stays quiet. The checks are shared with the other instrumentors' suites (``streaming.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from openinference.instrumentation.openai import OpenAIInstrumentor

from ..genai_rig import Rig, make_rig
from . import streaming


@pytest.fixture
def rig(request: pytest.FixtureRequest) -> Iterator[Rig]:
    made = make_rig(**getattr(request, "param", {}))
    OpenAIInstrumentor().instrument(tracer_provider=made.provider)
    yield made
    OpenAIInstrumentor().uninstrument()
    made.provider.shutdown()


@pytest.mark.parametrize("wrap", [True, False], ids=["in-a-span", "no-span"])
def test_a_streamed_loop_is_stopped_like_a_loop_of_plain_calls(rig: Rig, wrap: bool) -> None:
    streaming.stopped_like_plain_calls(rig, wrap)


def test_the_async_client_streaming_is_stopped_the_same_way(rig: Rig) -> None:
    streaming.async_stopped_like_plain_calls(rig)


def test_a_streamed_feed_of_news_is_quiet(rig: Rig) -> None:
    streaming.news_feed_is_quiet(rig)


@pytest.mark.parametrize("rig", [{"max_tokens": 700}], indirect=True)
def test_the_token_budget_counts_what_the_streams_reported(rig: Rig) -> None:
    streaming.token_budget_counts_what_streams_reported(rig)
