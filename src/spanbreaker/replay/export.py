"""``--export FILE``: the replayed spans, with the marks the breaker would have written, as OTLP/JSON lines.

Why: a user who wants to see a would-be trip in their own trace viewer can load this file (the Collector's
``otlpjsonfile`` receiver, or any OTLP/JSON reader) and find ``spanbreaker.tripped`` on the detection span
and its ancestors. One ``ExportTraceServiceRequest`` per trace per line, ids in hex as OTLP/JSON requires.
Encoded here, without the protobuf exporter packages, so the core install can export.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO, Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import StatusCode

_STATUS = {StatusCode.UNSET: 0, StatusCode.OK: 1, StatusCode.ERROR: 2}


def any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (tuple, list)):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def key_values(attributes: Any) -> list[dict[str, Any]]:
    return [{"key": str(k), "value": any_value(v)} for k, v in dict(attributes or {}).items()]


def span_json(span: ReadableSpan) -> dict[str, Any]:
    context = span.context
    assert context is not None
    out: dict[str, Any] = {
        "traceId": f"{context.trace_id:032x}", "spanId": f"{context.span_id:016x}", "name": span.name,
        "kind": int(span.kind.value) + 1, "startTimeUnixNano": str(span.start_time or 0),
        "endTimeUnixNano": str(span.end_time or span.start_time or 0),
        "attributes": key_values(span.attributes),
        "events": [{"timeUnixNano": str(e.timestamp), "name": e.name, "attributes": key_values(e.attributes)}
                   for e in span.events],
        "status": {"code": _STATUS[span.status.status_code]},
    }
    if span.parent is not None:
        out["parentSpanId"] = f"{span.parent.span_id:016x}"
    if span.status.description:
        out["status"]["message"] = span.status.description
    return out


def request_json(spans: Sequence[ReadableSpan], resource: dict[str, Any]) -> dict[str, Any]:
    """One request: the trace's recorded resource, spans grouped by instrumentation scope."""
    scopes: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        scope = span.instrumentation_scope.name if span.instrumentation_scope is not None else ""
        scopes.setdefault(scope, []).append(span_json(span))
    return {"resourceSpans": [{
        "resource": {"attributes": key_values(resource)},
        "scopeSpans": [{"scope": {"name": name}, "spans": items} for name, items in scopes.items()],
    }]}


class CollectingExporter(SpanExporter):
    """Holds the spans of the trace being replayed until :meth:`write_trace` puts them on a line."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS

    def write_trace(self, resource: dict[str, Any]) -> int:
        """Write the collected spans as one line; returns how many were written."""
        spans, self.spans = self.spans, []
        if spans:
            self.out.write(json.dumps(request_json(spans, resource), separators=(",", ":")) + "\n")
        return len(spans)

    def shutdown(self) -> None:
        self.spans = []
