"""``opentelemetry-instrument python semantic_kernel_app.py``: a Semantic Kernel app that knows nothing about
spanbreaker is stopped at the fifth identical search, Semantic Kernel's diagnostics off (its default) or sensitive."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..launcher.runs import launch_dev


@pytest.mark.timeout(120)
@pytest.mark.parametrize("sensitive", [False, True], ids=["diagnostics-off", "diagnostics-sensitive"])
def test_launcher_stops_a_looping_semantic_kernel_agent(tmp_path: Path, sensitive: bool) -> None:
    settings = {"SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS": "true",
                "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE": "true"} if sensitive else {}
    done = launch_dev("semantic_kernel_app.py", tmp_path, disabled="", **settings)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.summary
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["tool_calls"], summary["model_calls"]) == (4, 5)
    assert '"spanbreaker.blocked": true' in done.stdout
    assert done.stdout.count('"name": "execute_tool research-web_search"') == 5
    assert ('"gen_ai.tool.call.arguments"' in done.stdout) is sensitive, "nothing added to the spans"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
