"""Streamed Chat Completions under OpenLLMetry's OpenAI instrumentor, content tracing on or off: a loop is stopped
where a loop of plain calls is (the request shown to the breaker as the span starts), tokens are counted as the
streams end, nothing is lost, a feed of news stays quiet (``openai_client/streaming.py``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ..genai_rig import Rig
from ..openai_client import streaming
from .conftest import CONTENT


@pytest.mark.parametrize("wrap", [True, False], ids=["in-a-span", "no-span"])
@pytest.mark.parametrize("content", list(CONTENT))
def test_a_streamed_loop_is_stopped_like_a_loop_of_plain_calls(
        instrumented: Callable[..., Rig], content: str, wrap: bool) -> None:
    streaming.stopped_like_plain_calls(instrumented(content), wrap)


def test_the_async_client_streaming_is_stopped_the_same_way(instrumented: Callable[..., Rig]) -> None:
    streaming.async_stopped_like_plain_calls(instrumented())


def test_a_streamed_feed_of_news_is_quiet(instrumented: Callable[..., Rig]) -> None:
    streaming.news_feed_is_quiet(instrumented())


def test_the_token_budget_counts_what_the_streams_reported(instrumented: Callable[..., Rig]) -> None:
    streaming.token_budget_counts_what_streams_reported(instrumented(max_tokens=700))
