"""The Haystack example runs as a user would run it (a fresh process, the example's own provider, offline) and tells
its story."""

from __future__ import annotations

from ..examples_runner import assert_examples


def test_search_loop_example_is_stopped_before_max_agent_steps() -> None:
    assert_examples({"haystack_search_loop.py": (
        "spanbreaker tripped: [tool_repeat] web_search", "model calls made: 5, web_search ran 4 times",
        "TOOL web_search (blocked: never ran)", "CHAIN Agent.run")})
