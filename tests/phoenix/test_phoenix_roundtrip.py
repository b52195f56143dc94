"""Opt-in tier: a tripped smolagents run sent to a real Phoenix server and read back through its REST API.

Why: Phoenix is a trace backend people really use for agents, and it reshapes what it stores (span kinds,
nested attributes). The trip must still be findable there: the agent span, the step and the blocked tool call
carry ``spanbreaker.*``, and a healthy run carries none.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
from spanbreaker import marking

from ..inspection.agent import TASK, build_agent
from .conftest import Phoenix

pytestmark = [pytest.mark.phoenix, pytest.mark.timeout(300)]

EXPORTERS: dict[str, Callable[[Phoenix], Any]] = {
    "http": lambda p: HttpExporter(endpoint=p.traces_url),
    "grpc": lambda p: GrpcExporter(endpoint=p.grpc_endpoint, insecure=True),
}


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Phoenix returns dotted attributes as nested objects; flatten them back to OTel names."""
    if isinstance(value, dict):
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(flatten(item, f"{prefix}{key}."))
        return flat
    return {prefix[:-1]: value}


def phoenix_spans(phoenix: Phoenix, project: str, expected: int, timeout: float = 60.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    spans: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{phoenix.base_url}/v1/projects/{project}/spans?limit=1000", timeout=5) as r:
                spans = json.loads(r.read())["data"]
        except OSError:
            spans = []
        if len(spans) >= expected:
            return spans
        time.sleep(0.5)
    raise AssertionError(f"phoenix has {len(spans)} of {expected} spans in {project}")


@pytest.fixture(params=sorted(EXPORTERS))
def sent(request: Any, phoenix_server: Phoenix) -> Iterator[tuple[str, InMemorySpanExporter, Phoenix]]:
    project = f"spanbreaker-{request.param}-{request.node.name.split('[')[0][-24:]}"
    provider = TracerProvider(resource=Resource.create({"openinference.project.name": project,
                                                        "service.name": "phoenix-tier"}))
    local = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(local))
    provider.add_span_processor(SimpleSpanProcessor(EXPORTERS[request.param](phoenix_server)))
    spanbreaker.instrument(tracer_provider=provider, config=spanbreaker.BreakerConfig(), frameworks=["smolagents"])
    try:
        yield project, local, phoenix_server
    finally:
        spanbreaker.instrumentation.uninstrument()
        provider.shutdown()


def test_tripped_run_is_found_in_phoenix_with_its_marks(sent: Any) -> None:
    project, local, phoenix = sent
    agent, _, _ = build_agent()
    with pytest.raises(spanbreaker.Tripped):
        agent.run(TASK)
    expected = len(local.get_finished_spans())
    spans = phoenix_spans(phoenix, project, expected)
    assert len(spans) == expected
    assert len({s["context"]["span_id"] for s in spans}) == expected
    tripped = {s["name"]: flatten(s.get("attributes") or {}) for s in spans
               if flatten(s.get("attributes") or {}).get(marking.TRIPPED) is True}
    assert "ToolCallingAgent.run" in tripped, sorted(tripped)
    assert {a[marking.DETECTOR] for a in tripped.values()} == {"tool_repeat"}
    assert sum(a.get(marking.BLOCKED) is True for a in tripped.values()) == 1
    root = next(s for s in spans if s["name"] == "ToolCallingAgent.run")
    assert root["status_code"] == "ERROR"
    assert root["span_kind"] == "AGENT"


def test_healthy_run_in_phoenix_has_no_marks(sent: Any) -> None:
    project, local, phoenix = sent
    agent, _, _ = build_agent(healthy=True)
    agent.run(TASK)
    spans = phoenix_spans(phoenix, project, len(local.get_finished_spans()))
    assert not [s for s in spans if any(k.startswith("spanbreaker.") for k in flatten(s.get("attributes") or {}))]
