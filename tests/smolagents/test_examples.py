"""The smolagents examples run as a user would run them: a fresh process, the global provider, offline."""

from __future__ import annotations

from ..examples_runner import assert_examples

EXPECTED = {
    "smolagents_code_repair_loop.py": ("detector : error_loop", "spanbreaker.blocked=true", "model calls made: 4"),
    "smolagents_search_storm.py": ("detector : tool_repeat", "searches actually run: 4"),
    "smolagents_managed_cycle.py": ("detector : delegation_cycle", "orchestrator -> specialist -> orchestrator"),
}


def test_examples_trip_as_expected_and_exit_zero() -> None:
    assert_examples(EXPECTED)
