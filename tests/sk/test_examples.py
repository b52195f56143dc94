"""The Semantic Kernel example runs offline, as the README says, and tells its story (run with this tier's Python: the
default suite's example runner cannot import Semantic Kernel)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_search_loop_example_is_tripped() -> None:
    result = subprocess.run([sys.executable, str(REPO / "examples" / "semantic_kernel_search_loop.py")],
                            capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "spanbreaker tripped: [tool_repeat] research-web_search called 5 times" in result.stdout
    assert "web_search ran 4 times (the auto-invoke limit alone would allow 30)" in result.stdout
    assert "execute_tool execute_tool research-web_search (blocked: never ran)" in result.stdout
    assert "tool arguments or results on the exported spans: none" in result.stdout
