"""``opentelemetry-instrument python autogen_app.py``: an AutoGen app that knows nothing about spanbreaker is stopped,
with every instrumentor the tier has installed loading beside spanbreaker's plugin (OpenInference's OpenAI and AutoGen
AgentChat instrumentors, and autogen-core's own spans): both tool layers carry each call, counted once."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..launcher.runs import launch_dev


@pytest.mark.timeout(120)
def test_launcher_stops_a_looping_autogen_app(tmp_path: Path) -> None:
    done = launch_dev("autogen_app.py", tmp_path, disabled="")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.summary
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["tool_calls"], summary["model_calls"]) == (4, 5)
    assert '"spanbreaker.tripped": true' in done.stdout
    assert done.stdout.count('"name": "analyst.search"') == 5, "OpenInference's tool span per call (the 5th vetoed)"
    assert done.stdout.count('"name": "execute_tool search"') == 4, "autogen-core's own span inside each that ran"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]


@pytest.mark.timeout(120)
def test_launcher_counts_each_tool_call_once(tmp_path: Path) -> None:
    """Two instrumentors' spans for each call, one call against the budget: the 4th is vetoed, after 3 ran."""
    done = launch_dev("autogen_app.py", tmp_path, disabled="", SPANBREAKER_MAX_TOOL_CALLS="3")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.summary
    assert (summary["detector"], summary["tool_calls"]) == ("call_budget", 3)


@pytest.mark.timeout(120)
def test_launcher_stops_a_loop_over_mcp_tools(tmp_path: Path) -> None:
    """The app imports autogen-ext's MCP workbench only when it runs: the adapter patches it then, and the loop over
    a real MCP server's tool is stopped at the 5th search, 4 of them answered by the server."""
    done = launch_dev("autogen_app.py", tmp_path, disabled="", AUTOGEN_APP_TOOLS="mcp")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.summary
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["tool_calls"], summary["model_calls"]) == (4, 5)
    assert done.stdout.count('"gen_ai.tool.call.result": "Paris: sunny, 18C"') == 4
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
