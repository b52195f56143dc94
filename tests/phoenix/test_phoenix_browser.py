"""Opt-in (``phoenix`` and ``browser``): Phoenix's own trace view, rendered by headless Chromium, shows the trip.

Why: the REST check proves the data is stored; this proves a person opening the trace in Phoenix sees the
tripped agent span, its error status and the breaker's reason. The DOM after rendering is searched, and a
screenshot proves the page paints.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

from ..inspection.agent import TASK, build_agent
from .conftest import Phoenix
from .test_phoenix_roundtrip import phoenix_spans

pytestmark = [pytest.mark.phoenix, pytest.mark.browser, pytest.mark.timeout(300)]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-extensions", "--disable-sync", "--disable-component-update", "--virtual-time-budget=20000"]
PROJECT = "spanbreaker-browser"


@pytest.fixture
def tripped_trace(phoenix_server: Phoenix) -> Iterator[str]:
    provider = TracerProvider(resource=Resource.create({"openinference.project.name": PROJECT}))
    local = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(local))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=phoenix_server.traces_url)))
    spanbreaker.instrument(tracer_provider=provider, config=spanbreaker.BreakerConfig(), frameworks=["smolagents"])
    try:
        agent, _, _ = build_agent()
        with pytest.raises(spanbreaker.Tripped) as caught:
            agent.run(TASK)
        phoenix_spans(phoenix_server, PROJECT, len(local.get_finished_spans()))
        yield caught.value.trace_id
    finally:
        spanbreaker.instrumentation.uninstrument()
        provider.shutdown()


def _project_id(phoenix: Phoenix) -> str:
    with urllib.request.urlopen(phoenix.base_url + "/v1/projects", timeout=5) as reply:
        projects: list[dict[str, Any]] = json.loads(reply.read())["data"]
    return next(str(p["id"]) for p in projects if p["name"] == PROJECT)


def test_phoenix_trace_view_shows_the_trip(phoenix_server: Phoenix, tripped_trace: str, tmp_path: Path) -> None:
    if CHROMIUM is None:
        pytest.fail("chromium is required for the browser tier (make test-browser installs it)")
    url = f"{phoenix_server.base_url}/projects/{_project_id(phoenix_server)}/traces/{tripped_trace}"
    base = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*base, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=False)
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = dom.stdout
    assert tripped_trace in page
    assert "ToolCallingAgent.run" in page and "SearchTool" in page
    assert "spanbreaker: tool_repeat: search called 5 times" in page, "the breaker's reason is on screen"
    shot = tmp_path / "phoenix-trace.png"
    painted = subprocess.run([*base, "--window-size=1400,900", f"--screenshot={shot}", url], capture_output=True,
                             text=True, timeout=120, check=False)
    assert painted.returncode == 0, painted.stderr[-2000:]
    assert shot.stat().st_size > 30_000  # a painted trace view, not a blank page
