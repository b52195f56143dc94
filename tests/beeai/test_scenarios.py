"""Each Bee failure mode trips on real BeeAI agents; its healthy look-alike runs to its answer untouched.

ReActAgent, ToolCallingAgent and RequirementAgent each run every scenario with a scripted model; tools,
memories, retries and handoffs are BeeAI's own, traced by the live OpenInference spans of the adapter.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from . import scenarios
from .checks import BLOCKED, assert_quiet, assert_trip_marked
from .conftest import Traced

KINDS = scenarios.AGENT_KINDS
TIMEOUT_S = 30.0


def run(coroutine: Any) -> scenarios.Outcome:
    """Run one scenario; a hang fails the test instead of stalling the suite."""
    outcome: scenarios.Outcome = asyncio.run(asyncio.wait_for(coroutine, TIMEOUT_S))
    return outcome


@pytest.mark.parametrize("kind", KINDS)
def test_fixation_trips_on_paraphrased_queries_with_the_same_observation(
        traced: Callable[..., Traced], kind: str) -> None:
    t = traced()
    outcome = run(scenarios.fixation(kind, healthy=False))
    assert outcome.trip is not None and outcome.trip.detector == "input_fixation"
    assert outcome.model_calls < outcome.allowed
    assert_trip_marked(t, outcome.trip)


@pytest.mark.parametrize("kind", KINDS)
def test_faceted_search_with_differing_results_stays_quiet(traced: Callable[..., Traced], kind: str) -> None:
    t = traced()
    outcome = run(scenarios.fixation(kind, healthy=True))
    assert outcome.trip is None and outcome.result is not None
    assert outcome.model_calls == 15
    assert_quiet(t)


@pytest.mark.parametrize("kind", KINDS)
def test_echo_loop_trips_on_low_exploration(traced: Callable[..., Traced], kind: str) -> None:
    t = traced()
    outcome = run(scenarios.echo_loop(kind, healthy=False))
    assert outcome.trip is not None and outcome.trip.detector == "low_exploration"
    assert outcome.model_calls < outcome.allowed
    assert_trip_marked(t, outcome.trip)


@pytest.mark.parametrize("kind", KINDS)
def test_research_reaching_new_sources_stays_quiet(traced: Callable[..., Traced], kind: str) -> None:
    t = traced()
    outcome = run(scenarios.echo_loop(kind, healthy=True))
    assert outcome.trip is None and outcome.result is not None
    assert outcome.model_calls == 21
    assert_quiet(t)


@pytest.mark.parametrize("kind", KINDS)
def test_retry_storm_trips_and_the_next_retry_is_vetoed_not_retried(
        traced: Callable[..., Traced], kind: str) -> None:
    t = traced()
    outcome = run(scenarios.retry_storm(kind, healthy=False))
    assert outcome.trip is not None and outcome.trip.detector == "error_loop"
    assert outcome.trip.evidence.get("exception_type") == "ConnectionError"  # unwrapped from ToolError
    # 6 attempts allowed (retries=5); the 6th was vetoed before it ran, and the model was not asked again.
    assert outcome.extra["attempts"] == 5
    assert outcome.model_calls == 1
    assert_trip_marked(t, outcome.trip)
    vetoed = [s for s in t.spans() if (s.attributes or {}).get(BLOCKED)]
    assert [(s.attributes or {}).get("spanbreaker.beeai.attempt") for s in vetoed] == [6]


@pytest.mark.parametrize("kind", KINDS)
def test_flaky_tool_that_fails_once_then_succeeds_stays_quiet(traced: Callable[..., Traced], kind: str) -> None:
    t = traced()
    outcome = run(scenarios.retry_storm(kind, healthy=True))
    assert outcome.trip is None and outcome.result is not None
    assert outcome.extra["attempts"] == 9  # 8 calls, the first retried once
    assert_quiet(t)


@pytest.mark.parametrize("kind", KINDS)
def test_unconstrained_memory_inflation_trips_on_the_prompt_size(traced: Callable[..., Traced], kind: str) -> None:
    t = traced(max_prompt_tokens=12_000)
    outcome = run(scenarios.memory_inflation(kind, healthy=False, tracer_provider=t.provider))
    assert outcome.trip is not None and outcome.trip.detector == "context_growth"
    assert outcome.extra["turns"] < 12
    assert outcome.trip.evidence["source"] == "estimated"  # vetoed before the inflated prompt was sent
    assert_trip_marked(t, outcome.trip)


@pytest.mark.parametrize("kind", KINDS)
def test_sliding_memory_keeps_the_prompt_bounded_and_stays_quiet(traced: Callable[..., Traced], kind: str) -> None:
    t = traced(max_prompt_tokens=12_000)
    outcome = run(scenarios.memory_inflation(kind, healthy=True, tracer_provider=t.provider))
    assert outcome.trip is None and outcome.extra["turns"] == 12
    assert max(outcome.extra["prompt_tokens"]) < 12_000
    assert_quiet(t)


@pytest.mark.parametrize("kind", KINDS)
def test_nested_agents_trip_on_the_budget_summed_over_the_trace(traced: Callable[..., Traced], kind: str) -> None:
    t = traced(max_model_calls=40)
    outcome = run(scenarios.nested(kind, healthy=False))
    assert outcome.trip is not None and outcome.trip.detector == "call_budget"
    # No single agent came near its own max_iterations; the whole tree stopped at the trace's budget.
    assert outcome.extra["delegations"] < scenarios.MAX_ITERATIONS
    assert outcome.model_calls == 40
    assert_trip_marked(t, outcome.trip)
    agents = [s for s in t.spans() if (s.attributes or {}).get("openinference.span.kind") == "AGENT"]
    assert len({s.context.trace_id for s in agents if s.context is not None}) == 1
    assert len(agents) == outcome.extra["delegations"] + 1


@pytest.mark.parametrize("kind", KINDS)
def test_nested_agents_within_budget_stay_quiet(traced: Callable[..., Traced], kind: str) -> None:
    t = traced(max_model_calls=40)
    outcome = run(scenarios.nested(kind, healthy=True))
    assert outcome.trip is None and outcome.result is not None
    assert_quiet(t)


@pytest.mark.parametrize("kind", KINDS)
def test_handoff_too_deep_is_vetoed_at_the_nested_agent_start(traced: Callable[..., Traced], kind: str) -> None:
    """The veto lands on the nested agent's own start (inside the HandoffTool): that agent never runs, and
    the orchestrator above it stops too. The healthy look-alike is the quiet nested run above (depth 2 < 4)."""
    t = traced(max_delegation_depth=1)
    outcome = run(scenarios.nested(kind, healthy=False))
    assert outcome.trip is not None and outcome.trip.detector == "delegation_depth"
    assert outcome.extra == {"delegations": 1, "nested_model_calls": 0}
    assert_trip_marked(t, outcome.trip)
    blocked = [s for s in t.spans() if (s.attributes or {}).get(BLOCKED)]
    assert [(s.attributes or {}).get("openinference.span.kind") for s in blocked] == ["AGENT"]


@pytest.mark.parametrize("healthy", [False, True], ids=["over-budget", "within-budget"])
def test_nested_agents_token_budget_sums_every_agents_usage(traced: Callable[..., Traced], healthy: bool) -> None:
    t = traced(max_tokens=30_000)
    outcome = run(scenarios.nested("requirement", healthy=healthy))
    if healthy:
        assert outcome.trip is None and outcome.result is not None
        assert_quiet(t)
        return
    assert outcome.trip is not None and outcome.trip.detector == "token_budget"
    assert outcome.extra["nested_model_calls"] > outcome.extra["delegations"]  # most tokens spent below the top
    assert_trip_marked(t, outcome.trip)
