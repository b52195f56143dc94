"""Start worker processes that share one trace, release them together, collect their JSON reports.

Workers are real processes forked from a fork server that imported smolagents once (``forkserver`` preload): each
is its own interpreter state, Redis connections and threads, without paying the import in every worker.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace
from opentelemetry.context import Context
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload([f"{__package__}.worker", "spanbreaker.state.redis", "redis"])


def wait_until(condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    """Poll ``condition`` until it holds (True) or ``timeout_s`` passed (False): wait on an event, not a guess."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


def remote_parent(trace_id: int) -> Context:
    """A context whose parent is a remote span of ``trace_id``: what a server instrumentation makes of a request's
    traceparent."""
    span_context = SpanContext(trace_id, 0xC0FFEE, is_remote=True, trace_flags=TraceFlags(1))
    return otel_trace.set_span_in_context(NonRecordingSpan(span_context))


def in_trace(trace_id: int) -> object:
    """Attach :func:`remote_parent` as the current context; returns the token to detach."""
    return otel_context.attach(remote_parent(trace_id))


def traceparent() -> tuple[str, str]:
    """A fresh W3C traceparent and its trace id (hex), as an upstream service would send it."""
    trace_hex = uuid.uuid4().hex
    return f"00-{trace_hex}-{uuid.uuid4().hex[:16]}-01", trace_hex


def _child(module: str, spec: dict[str, Any], result: str, log: str) -> None:
    """Runs in the worker process: stderr to a file (never a pipe that could fill and block), JSON to a file."""
    with open(log, "w") as stream:
        os.dup2(stream.fileno(), 2)
        sys.stderr = stream
        import importlib

        report = importlib.import_module(module).main(spec)
        Path(result).write_text(json.dumps(report, default=str))
        sys.stderr.flush()


class Workers:
    def __init__(self, directory: Path, module: str = f"{__package__}.worker") -> None:
        self.directory = directory
        self.module = module
        self.go = directory / f"go-{uuid.uuid4().hex[:6]}"
        self.procs: list[tuple[Any, Path]] = []

    def start(self, **spec: Any) -> int:
        ready = self.directory / f"ready-{uuid.uuid4().hex[:6]}"
        spec.update(ready=str(ready), go=str(self.go))
        proc = _CONTEXT.Process(target=_child, args=(self.module, spec, str(ready.with_suffix(".json")),
                                                     str(ready.with_suffix(".log"))), daemon=True)
        proc.start()
        self.procs.append((proc, ready))
        return len(self.procs) - 1

    def _log(self, ready: Path) -> str:
        log = ready.with_suffix(".log")
        return log.read_text()[-3000:] if log.exists() else "(no log)"

    def release(self, timeout_s: float = 45.0) -> None:
        """Wait until every worker has built its agent, then let them all run at once."""
        deadline = time.monotonic() + timeout_s
        while not all(ready.exists() for _, ready in self.procs):
            for proc, ready in self.procs:
                if not proc.is_alive() and not ready.exists():
                    raise AssertionError(f"worker exited early: {self._log(ready)}")
            if time.monotonic() > deadline:
                raise AssertionError("workers did not get ready")
            time.sleep(0.01)
        self.go.touch()

    def wait_for(self, path: Path, timeout_s: float = 45.0) -> None:
        """Wait until a worker signalled ``path`` (a step it reached); fail at once if a worker died instead."""
        def died() -> list[Path]:
            return [ready for proc, ready in self.procs if proc.exitcode not in (None, 0)]

        if not wait_until(lambda: path.exists() or bool(died()), timeout_s):
            raise AssertionError(f"no worker reached {path.name}")
        if not path.exists():
            raise AssertionError(f"worker died: {self._log(died()[0])}")

    def join(self, index: int, timeout_s: float = 60.0) -> None:
        """Wait until worker ``index`` has finished (its report is read later, with the others')."""
        proc, ready = self.procs[index]
        proc.join(timeout_s)
        assert not proc.is_alive(), f"worker hung: {self._log(ready)}"

    def results(self, timeout_s: float = 60.0) -> list[dict[str, Any]]:
        reports = []
        for proc, ready in self.procs:
            proc.join(timeout_s)
            if proc.is_alive():
                proc.kill()
                raise AssertionError(f"worker hung: {self._log(ready)}")
            assert proc.exitcode == 0, self._log(ready)
            reports.append(json.loads(ready.with_suffix(".json").read_text()))
        return reports
