"""The AutoGen example runs offline, as the README says, and tells its story (run with this tier's Python: the
default suite's example runner cannot import AutoGen)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_search_loop_example_is_tripped() -> None:
    result = subprocess.run([sys.executable, str(REPO / "examples" / "autogen_search_loop.py")],
                            capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "spanbreaker tripped: [tool_repeat] web_search called 5 times" in result.stdout
    assert "searches run: 4 (AutoGen's own limit here, max_tool_iterations, allows 30)" in result.stdout
    assert "search #4:" in result.stdout and "search #5:" not in result.stdout
    assert "execute_tool execute_tool web_search (blocked: never ran)" in result.stdout
    assert "invoke_agent invoke_agent analyst" in result.stdout
    assert "  analyst.run" in result.stdout  # the application's span named after the agent: marked, no false cycle
    assert "Token count" not in result.stderr
