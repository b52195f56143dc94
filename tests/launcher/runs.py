"""What a launcher run left behind (exit status, stdout, stderr) and the spans a set of runs exported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..otlp_receiver import ReceivedSpan, SpanStore


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    def line(self, key: str) -> dict[str, Any]:
        """The app's JSON line that carries ``key`` (the app summary: ``outcome``; the stack report: ``stack``)."""
        for text in reversed(self.stdout.splitlines()):
            if text.startswith("{") and f'"{key}"' in text:
                try:
                    found: dict[str, Any] = json.loads(text)
                except ValueError:
                    continue
                if key in found:
                    return found
        raise AssertionError(f"no {key!r} line; rc={self.returncode}\nstdout:\n{self.stdout[-3000:]}\n"
                             f"stderr:\n{self.stderr[-3000:]}")

    @property
    def summary(self) -> dict[str, Any]:
        return self.line("outcome")


@dataclass
class Runs:
    results: dict[str, Run]
    store: SpanStore

    def __getitem__(self, name: str) -> Run:
        return self.results[name]

    def exported(self, service: str) -> list[ReceivedSpan]:
        return [s for s in self.store.spans if s.resource.get("service.name") == service]


APPS = Path(__file__).resolve().parent / "apps"
SRC = Path(__file__).resolve().parents[2] / "src"
DEV_TIER_FRAMEWORKS = ("smolagents,agno,beeai,langchain,openai_agents,pydantic_ai,llama_index,crewai,haystack,groq,"
                       "ollama,mistralai")
"""The instrumentors of the other frameworks the dev tier has installed: loading them takes seconds."""


def launch_dev(app: str, cwd: Path, disabled: str = DEV_TIER_FRAMEWORKS, drop: Iterable[str] = (),
               **settings: str) -> Run:
    """``opentelemetry-instrument python apps/<app>`` from this environment (the dev tier), with this checkout's
    ``src``: console traces, no OTEL_/SPANBREAKER_/LAUNCHER_APP_ settings but ``settings``, the apps' 20 steps."""
    launcher = Path(sys.executable).parent / "opentelemetry-instrument"
    assert launcher.exists(), "opentelemetry-instrument is not installed next to this interpreter"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "SPANBREAKER_", "LAUNCHER_APP_"))
           and k != "PYTHONPATH" and k not in set(drop)}
    env.update(OTEL_TRACES_EXPORTER="console", OTEL_METRICS_EXPORTER="none", OTEL_LOGS_EXPORTER="none",
               OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=disabled, LAUNCHER_APP_MAX_STEPS="20", PYTHONPATH=str(SRC),
               PATH=os.pathsep.join([str(launcher.parent), env.get("PATH", "")]), **settings)
    done = subprocess.run([str(launcher), sys.executable, str(APPS / app)], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=100, check=False)
    return Run(done.returncode, done.stdout, done.stderr)
