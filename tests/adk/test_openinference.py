"""Google ADK with OpenInference's ADK instrumentor too (``tests/adk/openinference_app.py``, one process per scenario).

The instrumentor (openinference-instrumentation-google-adk 1.0 on ADK 2.13) completes ADK's own spans with its
attributes, and records a tool's output as ADK's whole ``FunctionResponse``, whose ``id`` is the call's own: read
whole, no two results were alike, and a loop of identical searches was caught only by ``low_exploration`` after 11
calls. The response is the result now: the fifth identical search is blocked before it runs. Six different searches
stay quiet. (On ADK 2.13 this instrumentor also leaves no span of ADK's model calls: a model-call or token budget sees
none of them there.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

APP = Path(__file__).resolve().parent / "openinference_app.py"
pytestmark = pytest.mark.timeout(180)


def run_app(scenario: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(APP), "--scenario", scenario], capture_output=True, text=True,
                          timeout=150)
    assert done.returncode == 0, done.stderr[-3000:]
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return summary


def test_a_search_loop_is_stopped_before_the_fifth_identical_search() -> None:
    summary = run_app("stuck")
    assert summary["openinference"] >= 4, "the instrumentor's attributes are on the tool spans"
    assert (summary["outcome"], summary["detector"]) == ("stopped", "tool_repeat")
    assert summary["searches"] == 4 and summary["blocked"] == ["execute_tool search"]
    assert summary["unique"]


def test_six_different_searches_are_quiet() -> None:
    summary = run_app("wide")
    assert (summary["outcome"], summary["detector"], summary["searches"]) == ("answered", None, 6)
    assert summary["blocked"] == []
