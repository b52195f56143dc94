"""Run a test app (one scenario per process) and read the JSON summary it prints last."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def app_summary(app: Path, *args: str, launcher: bool = False, environment: Mapping[str, str] | None = None,
                timeout: float = 120) -> dict[str, Any]:
    """``python app args`` (under ``opentelemetry-instrument`` with ``launcher``) from the repository root: it exits 0
    without a traceback, and its last stdout line is the summary."""
    command = [sys.executable, str(app), *args]
    if launcher:
        command.insert(0, str(Path(sys.executable).parent / "opentelemetry-instrument"))
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, **(environment or {})})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return summary
