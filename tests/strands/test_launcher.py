"""``opentelemetry-instrument python strands_app.py``: an app that knows nothing about spanbreaker is stopped, from
this environment (the fresh-venv tier, ``tests/launcher/test_fresh_venv.py``, runs it from the index)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..launcher.runs import launch_dev


@pytest.mark.timeout(120)
def test_launcher_stops_a_looping_strands_app(tmp_path: Path) -> None:
    done = launch_dev("strands_app.py", tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["tool_calls"], summary["model_calls"]) == (4, 5)
    assert '"spanbreaker.tripped": true' in done.stdout
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
