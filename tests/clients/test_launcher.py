"""``opentelemetry-instrument python client_loop_app.py`` with the Groq, Mistral and Ollama clients: the launcher loads
their OpenInference instrumentors (whose ``instrument()`` imports the client, which runs spanbreaker's adapter) and
spanbreaker; a plain loop that knows nothing about spanbreaker is stopped at the sixth model call, with or without a
span of its own around it (both ways for each client in ``test_tool_loop.py``; one here, each launch takes seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..launcher.runs import DEV_TIER_FRAMEWORKS, launch_dev

SPAN_NAMES = {"groq": "Completions", "mistralai": "MistralClient.chat", "ollama": "Chat"}


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("client", "span"), [("groq", "none"), ("mistralai", "app"), ("ollama", "none")],
                         ids=["groq-no-span", "mistralai-in-a-span", "ollama-no-span"])
def test_launcher_stops_a_plain_client_loop(tmp_path: Path, client: str, span: str) -> None:
    others = ",".join(name for name in DEV_TIER_FRAMEWORKS.split(",") if name != client)
    done = launch_dev("client_loop_app.py", tmp_path, disabled=others, LAUNCHER_APP_CLIENT=client,
                      LAUNCHER_APP_SPAN=span)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.summary
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["model_calls"], summary["tool_calls"]) == (5, 5)
    assert f'"name": "{SPAN_NAMES[client]}"' in done.stdout and '"spanbreaker.blocked": true' in done.stdout
    assert "spanbreaker could not" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-3000:]
