"""Each trip's evidence and each run's outcome label in the replay report (text, --json, HTML): the calls the trip
counted, by step and span id with fingerprints only (the raw arguments and results never appear), and the
label from ``eval.success`` or ``swebench.resolved``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spanbreaker.replay import replay
from spanbreaker.replay.outcome import OUTCOME_LABELS, Outcome, outcome

from . import traces as t
from .test_cli import check_html_matches_json, parse_html, run_cli
from .test_replay import SLICE

COMMAND = "pytest tests/test_x.py"
OUTPUT = "FAILED tests/test_x.py::test_a - AssertionError"


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("evidence") / "labelled.jsonl"
    return t.write_lines(path, [
        t.request(t.looping("loop"), {"service.name": "agent", "eval.success": False}),
        t.request(t.healthy("fine"), {"service.name": "agent", "eval.success": True}),
        t.request(t.looping("nolabel"), {"service.name": "agent"}),
    ])


def test_json_and_html_show_the_counted_calls_and_the_label(labelled: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    done = run_cli("replay", labelled, "--json", "--html", page)
    assert done.returncode == 0, done.stderr
    loop, fine, nolabel = (json.loads(line) for line in done.stdout.splitlines())
    assert (loop["outcome"], loop["success"], loop["outcome_key"]) == ("failure", False, "eval.success")
    assert (fine["outcome"], fine["success"], fine["tripped"]) == ("success", True, False)
    assert (nolabel["outcome"], nolabel["success"], nolabel["outcome_key"]) == (None, None, None)
    # tool_repeat at Step 5: the five identical calls of steps 1-5, the same fingerprints as the trip attributes
    evidence = loop["evidence"]
    assert evidence["identical_calls"] == 5 and evidence["tool"] == "bash"
    calls = loop["trip_calls"]
    assert [c["step"] for c in calls] == ["Step 1", "Step 2", "Step 3", "Step 4", "Step 5"]
    assert {c["args_fingerprint"] for c in calls} == {evidence["args_fingerprint"]}
    assert len({c["result_fingerprint"] for c in calls}) == 1
    assert calls[-1]["span_id"] == loop["span_id"]
    assert fine["trip_calls"] == [] and fine["evidence"] == {}
    html = page.read_text()
    parsed = parse_html(html)
    check_html_matches_json(parsed, [loop, fine, nolabel])  # outcome and the rows of the calls table too
    assert parsed.traces[loop["trace_id"]]["outcome"] == "failure"
    assert parsed.traces[nolabel["trace_id"]]["outcome"] == "not labelled"
    assert "identical_calls=5" in parsed.traces[loop["trace_id"]]["evidence"]
    assert parsed.summary["outcomes"] == "0 of 1 successful runs tripped, 1 of 1 unsuccessful"
    for raw in (COMMAND, OUTPUT, "AssertionError"):  # redaction: no argument or result text on the page
        assert raw not in html and raw not in json.dumps(loop["trip_calls"]) + json.dumps(evidence)


def test_text_report_shows_outcome_column_and_trip_evidence(labelled: Path) -> None:
    done = run_cli("replay", labelled)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "outcome" in out and "failure" in out and "success" in out
    assert "Trip evidence" in out and "identical_calls=5" in out
    assert out.count("Step 3  bash  span") == 2  # both loops list their counted calls
    assert "0 of 1 successful runs tripped, 1 of 1 unsuccessful" in out
    assert COMMAND not in out and OUTPUT not in out


def test_paraphrase_trip_lists_the_calls_with_their_differing_arguments() -> None:
    """input_fixation on a real run: four near-identical queries, different argument fingerprints, one result."""
    results = {r.resource["swebench.instance_id"]: r for r in replay([SLICE])}
    pylint = results["pylint-dev__pylint-8898"]
    assert pylint.outcome == Outcome("swebench.resolved", False) and pylint.outcome.word == "unresolved"
    assert [c.step for c in pylint.trip_calls] == ["Step 46", "Step 47", "Step 48", "Step 49"]
    assert len({c.args_fingerprint for c in pylint.trip_calls}) == 4
    assert len({c.result_fingerprint for c in pylint.trip_calls}) == 1
    sklearn = results["scikit-learn__scikit-learn-25102"]
    assert sklearn.detector == "context_growth" and sklearn.trip_calls == []  # counts tokens, not calls
    assert sklearn.shown_evidence["jump_tokens"] == 52137
    assert results["astropy__astropy-12907"].outcome == Outcome("swebench.resolved", True)


@pytest.mark.parametrize(("resource", "expected"), [
    ({"eval.success": True}, Outcome("eval.success", True)),
    ({"eval.success": "false"}, Outcome("eval.success", False)),
    ({"eval.success": 1}, Outcome("eval.success", True)),
    ({"swebench.resolved": False}, Outcome("swebench.resolved", False)),
    ({"eval.success": True, "swebench.resolved": False}, Outcome("eval.success", True)),  # the table's order
    ({"eval.success": "maybe", "swebench.resolved": True}, Outcome("swebench.resolved", True)),
    ({"eval.success": 0.5}, None),
    ({"service.name": "x"}, None),
])
def test_outcome_label_keys(resource: dict[str, object], expected: Outcome | None) -> None:
    assert outcome(resource) == expected
    assert list(OUTCOME_LABELS) == ["eval.success", "swebench.resolved"]
