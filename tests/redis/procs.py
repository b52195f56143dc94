"""Start worker processes that share one trace, release them together, collect their JSON reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

WORKER = Path(__file__).with_name("worker.py")


def traceparent() -> tuple[str, str]:
    """A fresh W3C traceparent and its trace id (hex), as an upstream service would send it."""
    trace_hex = uuid.uuid4().hex
    return f"00-{trace_hex}-{uuid.uuid4().hex[:16]}-01", trace_hex


class Workers:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.go = directory / f"go-{uuid.uuid4().hex[:6]}"
        self.procs: list[tuple[subprocess.Popen[str], Path]] = []

    def start(self, **spec: Any) -> int:
        ready = self.directory / f"ready-{uuid.uuid4().hex[:6]}"
        spec.update(ready=str(ready), go=str(self.go))
        log = ready.with_suffix(".log")
        with open(log, "w") as stderr:  # a file, not a pipe: a full pipe would block the worker mid-run
            proc = subprocess.Popen([sys.executable, str(WORKER), json.dumps(spec)], stdout=subprocess.PIPE,
                                    stderr=stderr, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        self.procs.append((proc, ready))
        return len(self.procs) - 1

    def release(self, timeout_s: float = 45.0) -> None:
        """Wait until every worker has imported everything and built its agent, then let them all run."""
        deadline = time.monotonic() + timeout_s
        while not all(ready.exists() for _, ready in self.procs):
            for proc, ready in self.procs:
                if proc.poll() is not None:
                    raise AssertionError(f"worker exited early: {ready.with_suffix('.log').read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise AssertionError("workers did not get ready")
            time.sleep(0.02)
        self.go.touch()

    def results(self, timeout_s: float = 45.0) -> list[dict[str, Any]]:
        reports = []
        for proc, ready in self.procs:
            out, _ = proc.communicate(timeout=timeout_s)
            assert proc.returncode == 0, ready.with_suffix(".log").read_text()[-3000:]
            reports.append(json.loads(out.strip().splitlines()[-1]))
        return reports
