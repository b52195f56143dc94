"""The CrewAI example runs offline, as the README says, and tells its story."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_search_loop_example_is_stopped_before_crewai_guard() -> None:
    result = subprocess.run([sys.executable, str(REPO / "examples" / "crewai_search_loop.py")],
                            capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "spanbreaker tripped: [tool_repeat]" in result.stdout
    assert "searches run: 4, model calls: 5" in result.stdout
    assert "search #4:" in result.stdout and "search #5:" not in result.stdout
    assert "TOOL web_search.run (blocked: never ran)" in result.stdout
    assert "CHAIN crew.kickoff" in result.stdout
