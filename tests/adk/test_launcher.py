"""``opentelemetry-instrument python adk_app.py``: a Google ADK app that knows nothing about spanbreaker, on ADK's
default telemetry (no tool arguments or results on its spans), is stopped before the 5th identical search runs:
the launcher's plugin switches spanbreaker's ADK adapter on when the app imports ADK, and the exported spans stay
ADK's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..launcher.runs import launch_dev


@pytest.mark.timeout(120)
def test_launcher_stops_a_looping_adk_app_on_adks_default_telemetry(tmp_path: Path) -> None:
    done = launch_dev("adk_app.py", tmp_path, disabled="",
                      drop=("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",))
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.summary
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["tool_calls"], summary["model_calls"]) == (4, 5)
    assert '"spanbreaker.tripped": true' in done.stdout and '"name": "execute_tool search"' in done.stdout
    assert "gen_ai.tool.call.arguments" not in done.stdout and "gen_ai.tool.call.result" not in done.stdout
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
