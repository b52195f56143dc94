"""Small recorded traces for the replay tests, written in the formats replay reads.

Why build them here rather than ship files: each test states the exact shape it needs (a loop or its healthy
look-alike, a defect at a known line), so a failing test points at one cause.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

T0 = 1_700_000_000_000_000_000
STEP_NS = 1_000_000_000
SCOPE = "openinference.instrumentation.smolagents"


def _id(seed: str, nbytes: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[: nbytes * 2]


def attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value}}


def agent_trace(name: str, calls: Iterable[tuple[str, str]], prompt: int = 1000) -> list[dict[str, Any]]:
    """OTLP/JSON spans of one agent run: a root AGENT span, then per (command, observation) a Step with a model
    call and a ``bash`` tool call. Prompts grow a little each step, like a real conversation."""
    trace_id = _id(name, 16)
    root = _id(f"{name}/root", 8)
    spans: list[dict[str, Any]] = []
    t = T0
    for i, (command, observation) in enumerate(calls, start=1):
        step, llm, tool = (_id(f"{name}/{i}/{k}", 8) for k in ("step", "llm", "tool"))
        spans.append({"traceId": trace_id, "spanId": step, "parentSpanId": root, "name": f"Step {i}", "kind": 1,
                      "startTimeUnixNano": str(t), "endTimeUnixNano": str(t + STEP_NS),
                      "attributes": [attr("openinference.span.kind", "CHAIN")], "status": {"code": 1}})
        spans.append({"traceId": trace_id, "spanId": llm, "parentSpanId": step, "name": "ScriptedModel.generate",
                      "kind": 1, "startTimeUnixNano": str(t + 1000), "endTimeUnixNano": str(t + STEP_NS // 2),
                      "attributes": [attr("openinference.span.kind", "LLM"), attr("llm.model_name", "scripted"),
                                     attr("llm.token_count.prompt", prompt + 100 * i),
                                     attr("llm.token_count.completion", 50),
                                     attr("llm.token_count.total", prompt + 100 * i + 50)],
                      "status": {"code": 1}})
        spans.append({"traceId": trace_id, "spanId": tool, "parentSpanId": step, "name": "bash", "kind": 1,
                      "startTimeUnixNano": str(t + STEP_NS // 2), "endTimeUnixNano": str(t + STEP_NS - 1000),
                      "attributes": [attr("openinference.span.kind", "TOOL"), attr("tool.name", "bash"),
                                     attr("input.value", json.dumps({"args": [], "kwargs": {"command": command}})),
                                     attr("output.value", observation)],
                      "status": {"code": 1}})
        t += STEP_NS
    spans.insert(0, {"traceId": trace_id, "spanId": root, "name": "CodeAgent.run", "kind": 1,
                     "startTimeUnixNano": str(T0 - 1000), "endTimeUnixNano": str(t + 1000),
                     "attributes": [attr("openinference.span.kind", "AGENT"), attr("input.value", f"task {name}")],
                     "status": {"code": 1}})
    return spans


def looping(name: str = "loop", steps: int = 12) -> list[dict[str, Any]]:
    """The agent re-runs one failing test command and gets the same output every time."""
    return agent_trace(name, [("pytest tests/test_x.py", "FAILED tests/test_x.py::test_a - AssertionError")] * steps)


def healthy(name: str = "healthy", steps: int = 12) -> list[dict[str, Any]]:
    """The look-alike: the same test command every step, but the code changes in between and the output with it."""
    calls = []
    for i in range(steps):
        calls.append((f"sed -i 's/x = {i}/x = {i + 1}/' src/x.py", f"edited line {i}"))
        calls.append(("pytest tests/test_x.py", f"{i} passed, {steps - i} failed in {0.1 * i:.1f}s"))
    return agent_trace(name, calls)


def request(spans: list[dict[str, Any]], resource: dict[str, Any] | None = None) -> dict[str, Any]:
    resource = resource or {"service.name": "replay-test"}
    return {"resourceSpans": [{"resource": {"attributes": [attr(k, v) for k, v in resource.items()]},
                               "scopeSpans": [{"scope": {"name": SCOPE}, "spans": spans}]}]}


def write_lines(path: Path, requests: Iterable[dict[str, Any] | str], gz: bool = False) -> Path:
    """One request per line (the Collector file exporter's form); a str is written as a raw line."""
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in requests)
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def to_jaeger(spans: list[dict[str, Any]], service: str = "replay-test") -> dict[str, Any]:
    """The same spans as Jaeger's UI download / query API returns them (microseconds, tags, references)."""
    out = []
    for s in spans:
        tags = []
        for a in s["attributes"]:
            (kind, value), = a["value"].items()
            jtype = {"stringValue": "string", "intValue": "int64", "boolValue": "bool", "doubleValue": "float64"}[kind]
            tags.append({"key": a["key"], "type": jtype, "value": int(value) if kind == "intValue" else value})
        tags.append({"key": "otel.scope.name", "type": "string", "value": SCOPE})
        if s.get("status", {}).get("code") == 2:
            tags.append({"key": "otel.status_code", "type": "string", "value": "ERROR"})
        start = int(s["startTimeUnixNano"]) // 1000
        refs = ([{"refType": "CHILD_OF", "traceID": s["traceId"], "spanID": s["parentSpanId"]}]
                if s.get("parentSpanId") else [])
        out.append({"traceID": s["traceId"], "spanID": s["spanId"], "operationName": s["name"], "references": refs,
                    "startTime": start, "duration": int(s["endTimeUnixNano"]) // 1000 - start, "tags": tags,
                    "logs": [], "processID": "p1"})
    return {"data": [{"traceID": spans[0]["traceId"], "spans": out,
                      "processes": {"p1": {"serviceName": service, "tags": []}}}],
            "total": 0, "limit": 0, "offset": 0, "errors": None}
