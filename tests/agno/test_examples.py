"""The Agno examples run offline, end to end, in a fresh interpreter (they set the global tracer provider)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(90)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env.update(AGNO_TELEMETRY="false", LITELLM_LOCAL_MODEL_COST_MAP="True")
    return subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=80,
                          env=env, cwd=tmp_path)


def test_team_delegation_cycle_example(tmp_path: Path) -> None:
    done = run_example("agno_team_delegation_cycle.py", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert "status CANCELLED" in done.stdout
    assert "detector : delegation_repeat" in done.stdout
    assert "lead 4, specialist 3" in done.stdout


def test_session_bloat_example(tmp_path: Path) -> None:
    done = run_example("agno_session_bloat.py", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert "run  7: CANCELLED" in done.stdout
    assert "detector : session_bloat" in done.stdout
    assert list(tmp_path.iterdir()) == [], "the example cleans up its SQLite store"
