"""Replay with ``response="steer"``: per trace, where a steer would have failed a call first and where the run
would still have stopped if the agent kept on (text, --json, HTML)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from spanbreaker import BreakerConfig
from spanbreaker.replay import replay

from . import traces as t
from .test_cli import check_html_matches_json, parse_html, run_cli


def _runs(tmp_path: Path) -> Path:
    return t.write_lines(tmp_path / "runs.jsonl", [t.request(t.looping("loop")), t.request(t.healthy("fine"))])


def test_replay_reports_would_steer_at_and_would_stop_at(tmp_path: Path) -> None:
    runs = _runs(tmp_path)
    loop, fine = replay([runs], BreakerConfig(response="steer"))
    assert loop.steer is not None and loop.steer["detector"] == "tool_repeat" and loop.steer["step"] == "Step 5"
    assert loop.tripped and loop.detector == "tool_repeat" and loop.step == "Step 6"  # the next identical call
    assert fine.steer is None and not fine.tripped
    stop_only, _ = replay([runs])
    assert stop_only.steer is None and stop_only.step == "Step 5"  # response=stop: the first finding stops


def test_cli_shows_the_steer_in_text_json_and_html(tmp_path: Path) -> None:
    runs, page = _runs(tmp_path), tmp_path / "report.html"
    env = dict(os.environ, SPANBREAKER_RESPONSE="steer")
    done = run_cli("replay", runs, "--json", "--html", page, env=env)
    assert done.returncode == 0, done.stderr
    loop, fine = (json.loads(line) for line in done.stdout.splitlines())
    assert loop["steer"]["step"] == "Step 5" and loop["step"] == "Step 6" and fine["steer"] is None
    parsed = parse_html(page.read_text())
    check_html_matches_json(parsed, [loop, fine])
    assert parsed.summary["steered"] == "1"
    assert parsed.traces[loop["trace_id"]]["steer"].startswith("tool_repeat at Step 5")
    text = run_cli("replay", runs, env=dict(env, COLUMNS="200"))
    assert "would steer at" in text.stdout and "tool_repeat at Step 5" in text.stdout
    assert "1 traces would have been steered first" in text.stdout
