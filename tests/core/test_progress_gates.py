"""The tool history's near-duplicate tier: its shortcut decides nothing, and one rule says when two answers are alike.

The tier skips comparing a call's arguments when no earlier call of another key answered close enough to its result
(:meth:`ToolHistory._result_may_repeat`): a necessary condition, checked first because most calls answer something
new. The property test records random sequences of calls drawn from a small vocabulary that makes every case
frequent (paraphrased queries, numbers in the arguments, results identical, similar, or bringing a new word, counts
that moved, short results, repeated keys) and checks what each call was found to be against a history whose gate
always says "compare".
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spanbreaker.progress import ToolHistory
from spanbreaker.signals import ToolCall

QUERIES = ["span processor example python", "python example span processor", "span-processor example python",
           "span processor example python page 2", "otel collector config", "otel collector config page 2", ""]
RESULTS = ["The SpanProcessor interface has on_start and on_end hooks; see the SDK docs for an example of one",
           "The SpanProcessor interface has on_start and on_end hooks; see the SDK docs for an example",
           "The SpanProcessor interface has on_start and on_end hooks; see the SDK docs for a sample of them",
           "Ran 12 tests in 0.4s, 3 failed: test_on_start, test_on_end, test_shutdown (see the log above).",
           "Ran 13 tests in 0.4s, 3 failed: test_on_start, test_on_end, test_shutdown (see the log above).",
           "ok", "Successfully edited the file: the span processor now has on_start and on_end (1 replacement made)"]

call_strategy = st.tuples(st.sampled_from(["search", "bash"]), st.sampled_from(QUERIES), st.sampled_from(RESULTS),
                          st.integers(0, 3))
"""(tool, arguments, result, model turns started before the call)."""


def _call(name: str, query: str, result: str) -> ToolCall:
    return ToolCall(name, hash((name, query)), query, hash(result), result, empty=len(result) < 3)


def _findings(calls: list[tuple[str, str, str, int]], gate_open: bool, monkeypatch: pytest.MonkeyPatch
              ) -> list[tuple[Any, ...]]:
    with monkeypatch.context() as patch:
        if gate_open:
            patch.setattr(ToolHistory, "_result_may_repeat", lambda self, call, digits, earlier: True)
        history = ToolHistory(similarity=90.0)
        found = []
        for name, query, result, turns in calls:
            for _ in range(turns):
                history.model_turn()
            history.record(_call(name, query, result))
            found.append((history.new, history.stale_run, history.paraphrases, history.change_seq, history.counted))
        return found


@settings(max_examples=300, deadline=None)
@given(st.lists(call_strategy, min_size=1, max_size=40))
def test_the_result_gate_changes_nothing_recording_finds(calls: list[tuple[str, str, str, int]]) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert _findings(calls, False, monkeypatch) == _findings(calls, True, monkeypatch)


def test_the_vocabulary_reaches_paraphrases() -> None:
    """The sequences above can find paraphrases (else the property would hold vacuously): two rewordings of one
    query answered alike, after a search that brought something new."""
    calls = [("search", QUERIES[3], RESULTS[3], 1), ("search", QUERIES[0], RESULTS[0], 1),
             ("search", QUERIES[1], RESULTS[1], 1), ("search", QUERIES[2], RESULTS[0], 1)]
    # the second answer drops a word of the first (no new word): the same facts
    with pytest.MonkeyPatch.context() as monkeypatch:
        found = _findings(calls, False, monkeypatch)
    assert [new for new, *_ in found] == [True, True, False, False]
    assert [paraphrases for _, _, paraphrases, *_ in found] == [0, 0, 1, 1]


def test_a_repeat_whose_count_moved_is_new_with_or_without_a_paraphrase_in_view() -> None:
    """The same test command answered with the same words but another count ("Ran 12" then "Ran 13") is progress, as
    a paraphrase answered so is: one rule whether or not another wording of the command is in the window. Answered
    with the same words and counts, the repeat is not new."""
    rerun = [("bash", "pytest tests", RESULTS[3], 1), ("bash", "pytest tests", RESULTS[4], 1)]
    reworded = [("bash", "pytest  tests/", RESULTS[3], 1)]
    same = [("bash", "pytest tests", RESULTS[3], 1), ("bash", "pytest tests", RESULTS[3], 1)]
    with pytest.MonkeyPatch.context() as monkeypatch:
        alone = _findings(rerun, False, monkeypatch)
        beside_a_paraphrase = _findings(reworded + rerun, False, monkeypatch)
        repeated = _findings(same, False, monkeypatch)
    assert alone[-1][0] is True
    assert beside_a_paraphrase[-1][0] is True
    assert repeated[-1][0] is False
