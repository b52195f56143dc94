"""``opentelemetry-instrument python client_loop_app.py`` with OpenTelemetry's own OpenAI instrumentor, on its
defaults (no message content): an app that knows nothing about spanbreaker is stopped at the sixth model call, with
or without a span of its own around the loop, and the exported spans carry no message content."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..launcher.runs import launch_dev


@pytest.mark.timeout(120)
@pytest.mark.parametrize("span", ["app", "none"], ids=["in-a-span", "no-span"])
def test_launcher_stops_a_plain_openai_loop_traced_by_openai_v2(tmp_path: Path, span: str) -> None:
    done = launch_dev("client_loop_app.py", tmp_path, disabled="", LAUNCHER_APP_CLIENT="openai",
                      LAUNCHER_APP_SPAN=span)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.summary
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["model_calls"], summary["tool_calls"]) == (5, 5)
    assert '"spanbreaker.blocked": true' in done.stdout
    assert '"gen_ai.operation.name": "chat"' in done.stdout, "openai-v2's own spans"
    assert "acme 2026 revenue guidance" not in done.stdout and "gen_ai.input.messages" not in done.stdout
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
