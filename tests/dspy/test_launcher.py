"""``opentelemetry-instrument python dspy_app.py``: an app that knows nothing about spanbreaker is stopped, from this
environment (the fresh-venv tier, ``tests/launcher/test_fresh_venv.py``, runs it from the index).

Under the launcher the instrumentor's own entry point imports DSPy from its ``_instrument``, which runs the adapter's
post-import hook: the adapter then only patches and leaves the instrumentor to finish switching itself on (once:
DSPy is not wrapped twice, each call makes one span)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "launcher" / "apps" / "dspy_app.py"


@pytest.mark.timeout(120)
def test_launcher_stops_a_looping_dspy_app(tmp_path: Path) -> None:
    launcher = Path(sys.executable).parent / "opentelemetry-instrument"
    if not launcher.exists():
        pytest.skip("opentelemetry-instrument is not installed next to this interpreter")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "SPANBREAKER_", "LAUNCHER_APP_"))
           and k != "PYTHONPATH"}
    env.update(OTEL_TRACES_EXPORTER="console", OTEL_METRICS_EXPORTER="none", OTEL_LOGS_EXPORTER="none",
               # the other frameworks the dev tier has installed: their instrumentors take seconds to load
               OTEL_PYTHON_DISABLED_INSTRUMENTATIONS="smolagents,agno,beeai,langchain,openai_agents,pydantic_ai,"
                                                     "llama_index,crewai",
               LAUNCHER_APP_MAX_STEPS="20", LITELLM_LOCAL_MODEL_COST_MAP="True",
               PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"),
               PATH=os.pathsep.join([str(launcher.parent), env.get("PATH", "")]))
    done = subprocess.run([str(launcher), sys.executable, str(APP)], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=100, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["tool_calls"], summary["model_calls"]) == (4, 5)
    assert '"spanbreaker.tripped": true' in done.stdout
    assert done.stdout.count('"name": "search.__call__"') == 5, "one span per tool call (4 ran, the 5th vetoed)"
    assert done.stdout.count('"tool.name": "search"') == 5, "the adapter's patches hold under the launcher"
    assert done.stdout.count('"llm.token_count.total"') == 5
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
