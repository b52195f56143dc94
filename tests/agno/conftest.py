"""Fixtures for the Agno suite: a private TracerProvider per test, the real instrumentor, the breaker.

Nothing here touches the global tracer provider (other suites share the pytest process); the adapter is
uninstrumented in teardown so the next test, or the next framework's suite, starts clean.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("AGNO_TELEMETRY", "false")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # the instrumentor imports litellm: stay offline

import pytest
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
from spanbreaker.adapters.agno import ADAPTER
from spanbreaker.adapters.openinference import ADAPTER as OPENINFERENCE
from spanbreaker.instrumentation import attach

MODES = ("sync", "async", "stream", "astream")
RUN_TIMEOUT_S = 10.0

logging.getLogger("agno").setLevel(logging.CRITICAL)


class SpanLedger(SpanProcessor):
    """Counts starts and ends per span id: every started span must end exactly once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started: dict[int, str] = {}
        self.ended: dict[int, int] = {}

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        with self.lock:
            self.started[span.context.span_id] = span.name

    def on_end(self, span: ReadableSpan) -> None:
        assert span.context is not None
        with self.lock:
            self.ended[span.context.span_id] = self.ended.get(span.context.span_id, 0) + 1

    def unended(self) -> list[str]:
        return [name for sid, name in self.started.items() if sid not in self.ended]

    def ended_twice(self) -> list[int]:
        return [sid for sid, count in self.ended.items() if count != 1]


@dataclass
class AgnoEnv:
    provider: TracerProvider
    exporter: InMemorySpanExporter
    processor: spanbreaker.BreakerSpanProcessor
    ledger: SpanLedger
    tool_bodies: list[str] = field(default_factory=list)

    def spans(self) -> tuple[ReadableSpan, ...]:
        return self.exporter.get_finished_spans()

    def tripped(self) -> list[ReadableSpan]:
        return [s for s in self.spans() if (s.attributes or {}).get("spanbreaker.tripped")]

    def blocked(self) -> list[ReadableSpan]:
        return [s for s in self.spans() if (s.attributes or {}).get("spanbreaker.blocked")]

    def assert_nothing_lost(self) -> None:
        """Every span that started was exported exactly once (the ledger runs after the breaker)."""
        assert self.ledger.unended() == [], f"spans never ended: {self.ledger.unended()}"
        assert self.ledger.ended_twice() == []
        ids = [s.context.span_id for s in self.spans() if s.context is not None]
        assert len(ids) == len(set(ids))


HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parents[1] / "examples"


@dataclass
class Launched:
    """A script started in its own interpreter at the start of the session; tests collect its result."""

    process: subprocess.Popen[str]

    def result(self, timeout: float = 80.0) -> subprocess.CompletedProcess[str]:
        out, err = self.process.communicate(timeout=timeout)
        return subprocess.CompletedProcess(self.process.args, self.process.returncode, out, err)


SCRIPTS = {
    "setup_tracing_first": HERE / "setup_tracing_first.py",
    "agno_team_delegation_cycle": EXAMPLES / "agno_team_delegation_cycle.py",
    "agno_session_bloat": EXAMPLES / "agno_session_bloat.py",
    "agno_workflow_step_loop": EXAMPLES / "agno_workflow_step_loop.py",
}
WAITERS = {
    "test_setup_tracing_first_then_spanbreaker": "setup_tracing_first",
    "test_team_delegation_cycle_example": "agno_team_delegation_cycle",
    "test_session_bloat_example": "agno_session_bloat",
    "test_workflow_step_loop_example": "agno_workflow_step_loop",
}
"""Which test waits for which script."""


def _waits_for(item: pytest.Item) -> str | None:
    return WAITERS.get(getattr(item, "originalname", item.name))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that wait for the scripts go last, so the scripts overlap with everything else."""
    items.sort(key=lambda item: _waits_for(item) is not None)


@pytest.fixture(scope="session", autouse=True)
def launched(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[dict[str, Launched]]:
    """Scripts that need the global tracer provider, started together (only those a selected test waits for)."""
    wanted = {name for item in request.session.items if (name := _waits_for(item)) is not None}
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env.update(AGNO_TELEMETRY="false", LITELLM_LOCAL_MODEL_COST_MAP="True")
    started: dict[str, Launched] = {}
    for name in sorted(wanted):
        folder = tmp_path_factory.mktemp(name)
        started[name] = Launched(subprocess.Popen(
            [sys.executable, str(SCRIPTS[name])], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=folder, env=dict(env, SB_DB=str(folder / "traces.db"))))
    yield started
    for job in started.values():
        if job.process.poll() is None:
            job.process.kill()
            job.process.communicate()


@pytest.fixture
def make_env() -> Iterator[Callable[..., AgnoEnv]]:
    """``make_env(**config_overrides)``: instrument Agno on a fresh provider with a breaker of that config."""
    made: list[AgnoEnv] = []

    def make(**overrides: Any) -> AgnoEnv:
        assert not made, "one environment per test"
        spanbreaker.instrumentation.uninstrument()  # a suite that left frameworks instrumented on its provider
        provider = TracerProvider()
        config = spanbreaker.BreakerConfig().replace(**overrides)
        processor = attach(provider, config)
        exporter = InMemorySpanExporter()
        ledger = SpanLedger()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        provider.add_span_processor(ledger)
        ADAPTER.instrument(provider, processor)
        OPENINFERENCE.instrument(provider, processor)  # what spanbreaker.instrument() adds along with any framework
        env = AgnoEnv(provider, exporter, processor, ledger)
        made.append(env)
        return env

    yield make
    ADAPTER.uninstrument()
    OPENINFERENCE.uninstrument()
    for env in made:
        env.provider.shutdown()


@pytest.fixture
def env(make_env: Callable[..., AgnoEnv]) -> AgnoEnv:
    return make_env()


def is_run_output(event: Any) -> bool:
    return type(event).__name__ in ("RunOutput", "TeamRunOutput")


def run(target: Any, mode: str, message: str = "go", **kwargs: Any) -> Any:
    """Run an Agent or Team in one of the four modes; return its RunOutput. Async modes are bounded in time."""
    if mode == "sync":
        return target.run(message, **kwargs)
    if mode == "stream":
        outputs = [e for e in target.run(message, stream=True, yield_run_output=True, **kwargs) if is_run_output(e)]
        assert outputs, "a streamed run must end with its RunOutput"
        return outputs[-1]
    if mode == "async":
        return asyncio.run(asyncio.wait_for(target.arun(message, **kwargs), RUN_TIMEOUT_S))

    async def consume() -> Any:
        outputs = [e async for e in target.arun(message, stream=True, yield_run_output=True, **kwargs)
                   if is_run_output(e)]
        assert outputs, "a streamed run must end with its RunOutput"
        return outputs[-1]

    return asyncio.run(asyncio.wait_for(consume(), RUN_TIMEOUT_S))
