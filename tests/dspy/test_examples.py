"""The DSPy example runs as a user would run it (a fresh process, the example's own provider, offline) and tells its
story."""

from __future__ import annotations

from ..examples_runner import assert_examples


def test_search_loop_example_is_stopped_before_react_max_iters() -> None:
    assert_examples({"dspy_search_loop.py": (
        "spanbreaker tripped: [tool_repeat] web_search", "model calls made: 5, web_search ran 4 times",
        "TOOL web_search.__call__ (blocked: never ran)", "CHAIN ReAct.forward")})
