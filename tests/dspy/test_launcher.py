"""``opentelemetry-instrument python dspy_app.py``: an app that knows nothing about spanbreaker is stopped, from this
environment (the fresh-venv tier, ``tests/launcher/test_fresh_venv.py``, runs it from the index).

Under the launcher the instrumentor's own entry point imports DSPy from its ``_instrument``, which runs the adapter's
post-import hook: the adapter then only patches and leaves the instrumentor to finish switching itself on (once:
DSPy is not wrapped twice, each call makes one span)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..launcher.runs import launch_dev


@pytest.mark.timeout(120)
def test_launcher_stops_a_looping_dspy_app(tmp_path: Path) -> None:
    done = launch_dev("dspy_app.py", tmp_path, LITELLM_LOCAL_MODEL_COST_MAP="True")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["tool_calls"], summary["model_calls"]) == (4, 5)
    assert '"spanbreaker.tripped": true' in done.stdout
    assert done.stdout.count('"name": "search.__call__"') == 5, "one span per tool call (4 ran, the 5th vetoed)"
    assert done.stdout.count('"tool.name": "search"') == 5, "the adapter's patches hold under the launcher"
    assert done.stdout.count('"llm.token_count.total"') == 5
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
