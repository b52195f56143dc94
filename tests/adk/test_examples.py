"""The Google ADK example runs offline, as the README says, and tells its story (run with this tier's Python: the
default suite's example runner cannot import ADK)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_search_loop_example_is_tripped() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"}
    result = subprocess.run([sys.executable, str(REPO / "examples" / "adk_search_loop.py")],
                            capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "spanbreaker tripped: [tool_repeat] web_search" in result.stdout
    assert "searches run: 4, model calls: 5" in result.stdout
    assert "search #4:" in result.stdout and "search #5:" not in result.stdout
    assert "execute_tool web_search (blocked: never ran)" in result.stdout
    assert "invoke_agent invoke_agent analyst" in result.stdout
    assert "tool arguments or results on the exported spans: none" in result.stdout
