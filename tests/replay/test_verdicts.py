"""The replay verdicts of the committed corpora are the pinned ones (``tests/replay/verdicts.py``); ``make
verdicts`` checks the large corpora that are not in git the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import verdicts


@pytest.mark.parametrize("path", verdicts.COMMITTED, ids=verdicts.name_of)
def test_committed_corpus_replays_to_its_pinned_verdicts(path: Path) -> None:
    assert path.is_file(), f"{path} is committed to the repository"
    pinned = verdicts.pinned(path)
    assert len(pinned) >= 4
    assert verdicts.differences(pinned, verdicts.verdicts_of(path)) == []


def test_every_corpus_has_pinned_verdicts() -> None:
    """``make verdicts`` has something to compare against for every corpus, present here or not."""
    for path in verdicts.CORPORA:
        assert (verdicts.PINNED / f"{verdicts.name_of(path)}.json").is_file(), path


def test_a_moved_verdict_is_reported_by_trace() -> None:
    pinned = {"a": ["trip", "tool_repeat", 3, "00ff"], "b": ["quiet", None, None, None]}
    moved = {"a": ["trip", "tool_repeat", 4, "01ff"], "b": ["quiet", None, None, None]}
    assert verdicts.differences(pinned, moved) == [
        "a: pinned ['trip', 'tool_repeat', 3, '00ff'], replayed ['trip', 'tool_repeat', 4, '01ff']"]
    assert verdicts.differences(pinned, dict(reversed(pinned.items()))) == ["same verdicts, different trace order"]
