"""The signals added for recall on real runaways (issue 13 item 3), each proven twice: it trips on the failure
read in a real corpus, and stays quiet on the healthy look-alike. Every other detector is disabled where it
would fire on the same scenario, so each test proves the signal it names."""

from __future__ import annotations

import json

import pytest

import spanbreaker
from spanbreaker.config import DETECTOR_IDS

from .spans import Harness, make_harness


def only(detector: str, **overrides: object) -> Harness:
    others = DETECTOR_IDS - {detector, "forced"}
    return make_harness(disabled_detectors=frozenset(others), **overrides)


# ------------------------------------------------------------------------------------ self_reported_stall
def ledger(in_loop: bool, progress: bool) -> str:
    """A Magentic-One orchestrator's progress ledger, as its model writes it (reasons with braces and quotes)."""
    return "Updated Ledger:\n" + json.dumps({
        "is_request_satisfied": {"reason": "The {C-suite} list is not \"complete\" yet.", "answer": False},
        "is_in_loop": {"reason": "We keep asking WebSurfer for the same page.", "answer": in_loop},
        "is_progress_being_made": {"reason": "No new facts in the last rounds.", "answer": progress},
        "next_speaker": {"reason": "WebSurfer can browse.", "answer": "WebSurfer"},
    }, indent=2)


def orchestrate(h: Harness, rounds: list[tuple[bool, bool]]) -> None:
    """One round: the ledger call, the instruction call, then WebSurfer re-worded each time (no exact repeat)."""
    with h.agent(name="Orchestrator", task="Which executives joined after the IPO?"):
        for n, (in_loop, progress) in enumerate(rounds, 1):
            with h.step(n):
                h.llm(**{"output.value": ledger(in_loop, progress)})
                h.llm(**{"output.value": f"Please search again, variant {n}, for the executives list."})
                h.tool("web_browser", {"instruction": f"search variant {n} for the executives"},
                       output=f"I typed 'executives {n}' into the search bar. Here is a screenshot ...")


def test_self_reported_stall_trips_when_the_ledger_flags_a_loop_round_after_round() -> None:
    h = only("self_reported_stall")
    with pytest.raises(spanbreaker.Tripped) as caught:
        orchestrate(h, [(False, True), (False, True), (True, False), (True, False), (False, False), (True, True)])
    assert caught.value.detector == "self_reported_stall"
    assert caught.value.evidence["consecutive_rounds"] == 3
    assert len(h.named("Step 6")) == 0  # stopped in round 5, before WebSurfer ran again


def test_self_reported_stall_quiet_when_the_orchestrator_recovers_after_a_stall() -> None:
    """Look-alike: two flagged rounds, then a round that moves on, again and again; and a long run whose ledger
    says it progresses every round. Neither reaches three flags in a row."""
    h = only("self_reported_stall")
    orchestrate(h, [(True, False), (False, False), (False, True)] * 6 + [(False, True)] * 20)
    assert h.trips == []
