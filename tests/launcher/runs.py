"""What a launcher run left behind (exit status, stdout, stderr) and the spans a set of runs exported."""

from __future__ import annotations

import json
from dataclasses import dataclass
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
