"""``opentelemetry-instrument python haystack_app.py``: a Haystack app that knows nothing about spanbreaker is stopped,
from this environment.

Under the launcher the instrumentor's own entry point imports Haystack from its ``_instrument``, which runs the
adapter's post-import hook: the adapter then only patches and leaves the instrumentor to finish switching itself on."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..launcher.runs import DEV_TIER_FRAMEWORKS, launch_dev


@pytest.mark.timeout(120)
def test_launcher_stops_a_looping_haystack_app(tmp_path: Path) -> None:
    others = ",".join(name for name in DEV_TIER_FRAMEWORKS.split(",") if name != "haystack")
    done = launch_dev("haystack_app.py", tmp_path, others)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.summary
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["tool_calls"], summary["model_calls"]) == (4, 5)
    assert '"spanbreaker.tripped": true' in done.stdout
    assert done.stdout.count('"tool.name": "search"') == 5, "the adapter's tool span per call (the 5th vetoed)"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
