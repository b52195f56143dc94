"""BeeAI Workflows: a loop inside a ``Workflow`` or an ``AgentWorkflow`` stops with ``spanbreaker.Tripped``.

Real BeeAI workflows and agents with the live OpenInference spans; the scripted model is the only stub. BeeAI's
``Workflow`` runs each step in the caller's task and wraps what a step raises in a ``FrameworkError``, but only
``Exception``: the trip (a ``BaseException``) passes, and the run boundary hands the caller the trip itself. No
later step runs, every started span is exported once, and the blocked call, its agent and the workflow's root
span carry the trip.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from opentelemetry import trace as trace_api

import spanbreaker
from spanbreaker.adapters._beeai_live import LiveBeeAIInstrumentor

from . import scenarios
from .checks import assert_quiet, assert_trip_marked
from .conftest import Traced

pytestmark = pytest.mark.timeout(60)


def _run(scenario: Callable[[str, bool], object], kind: str, healthy: bool) -> scenarios.Outcome:
    outcome = asyncio.run(asyncio.wait_for(scenario(kind, healthy), 30.0))  # type: ignore[arg-type]
    assert isinstance(outcome, scenarios.Outcome)
    assert not trace_api.get_current_span().get_span_context().is_valid, "the run leaked its context"
    assert LiveBeeAIInstrumentor._instance._runs == {}, "a run was left open"
    return outcome


def _root_is_the_workflow(traced: Traced, trip: spanbreaker.Tripped, name: str) -> None:
    roots = [s for s in traced.spans() if s.parent is None and s.context is not None
             and f"{s.context.trace_id:032x}" == trip.trace_id]
    assert [s.name for s in roots] == [name]
    assert (roots[0].attributes or {}).get("openinference.span.kind") == "CHAIN"
    assert roots[0].status.status_code.name == "ERROR"


LOOPS = [(scenarios.workflow_revision_loop, kind, "ResearchReview", 12) for kind in scenarios.AGENT_KINDS] + [
    (scenarios.agent_workflow, kind, "Pipeline", 5) for kind in scenarios.AGENT_WORKFLOW_KINDS]
"""(scenario, agent class, workflow name, most model calls before the trip). The revision loop: the review step
sends the research step back again and again, each round the same page and the same notes (15 rounds allowed).
The AgentWorkflow: its researcher searches paraphrases that all return the same page."""


@pytest.mark.parametrize(("scenario", "kind", "workflow", "most"), LOOPS,
                         ids=[f"{s.__name__}-{k}" for s, k, _, _ in LOOPS])
def test_loop_in_a_workflow_trips(traced: Callable[..., Traced], scenario: Callable[[str, bool], object],
                                  kind: str, workflow: str, most: int) -> None:
    t = traced()
    outcome = _run(scenario, kind, healthy=False)
    assert type(outcome.trip) is spanbreaker.Tripped, "the caller gets the trip itself, not a FrameworkError"
    assert outcome.trip.detector == "input_fixation"
    assert outcome.model_calls <= most and outcome.extra["writer_calls"] == 0, "no step ran after the trip"
    assert_trip_marked(t, outcome.trip)
    _root_is_the_workflow(t, outcome.trip, workflow)


@pytest.mark.parametrize("kind", scenarios.AGENT_KINDS)
def test_revision_rounds_that_find_new_documents_are_quiet(traced: Callable[..., Traced], kind: str) -> None:
    t = traced()
    outcome = _run(scenarios.workflow_revision_loop, kind, healthy=True)
    assert outcome.trip is None and outcome.result is not None and outcome.result.report == "the report"
    assert outcome.result.rounds == 6 and outcome.extra["writer_calls"] == 1
    assert_quiet(t)


@pytest.mark.parametrize("kind", scenarios.AGENT_WORKFLOW_KINDS)
def test_agent_workflow_with_varied_results_is_quiet(traced: Callable[..., Traced], kind: str) -> None:
    t = traced()
    outcome = _run(scenarios.agent_workflow, kind, healthy=True)
    assert outcome.trip is None and outcome.result is not None and outcome.extra["writer_calls"] == 1
    assert outcome.result.final_answer == "the report"
    assert_quiet(t)


def test_observe_mode_marks_the_workflow_and_lets_it_finish(traced: Callable[..., Traced]) -> None:
    t = traced(mode="observe")
    outcome = _run(scenarios.workflow_revision_loop, "tool_calling", healthy=False)
    assert outcome.trip is None and outcome.result is not None and outcome.result.rounds == scenarios.WORKFLOW_ROUNDS
    assert outcome.extra["writer_calls"] == 1
    assert t.breaker.stats.trips == 1 and t.breaker.stats.blocked == 0
    root = next(s for s in t.spans() if s.parent is None)
    assert root.name == "ResearchReview" and (root.attributes or {}).get("spanbreaker.tripped")
