"""``opentelemetry-instrument python agent_framework_app.py``: an app that knows nothing about spanbreaker, with Agent
Framework's sensitive data on (``ENABLE_SENSITIVE_DATA=true``), is stopped; with it off the loop runs to Agent
Framework's own limit. From this environment (the fresh-venv tier, ``tests/launcher/test_fresh_venv.py``, runs the
first from the index)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

APP = Path(__file__).resolve().parents[1] / "launcher" / "apps" / "agent_framework_app.py"


def launch(tmp_path: Path, sensitive: bool) -> tuple[dict[str, Any], str]:
    launcher = Path(sys.executable).parent / "opentelemetry-instrument"
    if not launcher.exists():
        pytest.skip("opentelemetry-instrument is not installed next to this interpreter")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "SPANBREAKER_", "LAUNCHER_APP_"))
           and k not in {"PYTHONPATH", "ENABLE_SENSITIVE_DATA", "ENABLE_INSTRUMENTATION"}}
    env.update(OTEL_TRACES_EXPORTER="console", OTEL_METRICS_EXPORTER="none", OTEL_LOGS_EXPORTER="none",
               # the other frameworks the dev tier has installed: their instrumentors take seconds to load
               OTEL_PYTHON_DISABLED_INSTRUMENTATIONS="smolagents,agno,beeai,langchain,openai_agents,pydantic_ai,"
                                                     "llama_index,crewai,strands",
               ENABLE_SENSITIVE_DATA="true" if sensitive else "false",
               LAUNCHER_APP_MAX_STEPS="20", PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"),
               PATH=os.pathsep.join([str(launcher.parent), env.get("PATH", "")]))
    done = subprocess.run([str(launcher), sys.executable, str(APP)], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=100, check=False)
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
def test_without_sensitive_data_the_launcher_does_not_stop_the_loop(tmp_path: Path) -> None:
    summary, stdout = launch(tmp_path, sensitive=False)
    assert (summary["outcome"], summary["exception"]) == ("limit", None)
    assert summary["tool_calls"] == 20
    assert "spanbreaker.tripped" not in stdout
