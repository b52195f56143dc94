"""``opentelemetry-instrument python agent_framework_app.py``: an app that knows nothing about spanbreaker is stopped,
with Agent Framework's sensitive data on (``ENABLE_SENSITIVE_DATA=true``: the arguments on the exported spans) and
off (its default: spanbreaker's adapter shows the breaker the calls in process, and the exported spans stay without
them). From this environment (the fresh-venv tier, ``tests/launcher/test_fresh_venv.py``, runs the first from the
index)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..launcher.runs import DEV_TIER_FRAMEWORKS, launch_dev


def launch(tmp_path: Path, sensitive: bool) -> tuple[dict[str, Any], str]:
    done = launch_dev("agent_framework_app.py", tmp_path, f"{DEV_TIER_FRAMEWORKS},strands",
                      drop=("ENABLE_SENSITIVE_DATA", "ENABLE_INSTRUMENTATION"),
                      ENABLE_SENSITIVE_DATA="true" if sensitive else "false")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stdout


@pytest.mark.timeout(120)
def test_launcher_stops_a_looping_agent_framework_app(tmp_path: Path) -> None:
    summary, stdout = launch(tmp_path, sensitive=True)
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["tool_calls"], summary["model_calls"]) == (4, 5)
    assert summary["provider"] == "TracerProvider"
    assert '"spanbreaker.tripped": true' in stdout


@pytest.mark.timeout(120)
def test_without_sensitive_data_the_launcher_stops_the_loop_and_exports_no_arguments(tmp_path: Path) -> None:
    summary, stdout = launch(tmp_path, sensitive=False)
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["tool_calls"], summary["model_calls"]) == (4, 5)
    assert '"spanbreaker.tripped": true' in stdout
    assert '"execute_tool web_search"' in stdout and "gen_ai.tool.call.arguments" not in stdout
    assert "gen_ai.tool.call.result" not in stdout
