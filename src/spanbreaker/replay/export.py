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

from opentelemetry.trace import StatusCode

from .feed import Marks
from .recorded import RecordedSpan

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


def span_json(span: RecordedSpan, marks: Marks | None) -> dict[str, Any]:
    """The recorded span as it ended in the replay: its attributes and events with the marks written on it, and
    the status the SDK would have given it (a recorded OK or ERROR wins over a mark's ERROR, as ``set_status``)."""
    attributes = {**span.attributes, **marks.attributes} if marks is not None else span.attributes
    events = (marks.events if marks is not None else []) + span.events
    code, message = span.status_code, span.status_message
    if code == 0 and marks is not None and marks.status is not None:
        code, message = _STATUS[marks.status.status_code], marks.status.description or ""
    out: dict[str, Any] = {
        "traceId": f"{span.trace_id:032x}", "spanId": f"{span.span_id:016x}", "name": span.name,
        "kind": span.kind or 1, "startTimeUnixNano": str(span.start_unix_nano),
        "endTimeUnixNano": str(span.end_unix_nano),
        "attributes": key_values(attributes),
        "events": [{"timeUnixNano": str(e.time_unix_nano), "name": e.name, "attributes": key_values(e.attributes)}
                   for e in events],
        "status": {"code": code},
    }
    if span.parent_id is not None:
        out["parentSpanId"] = f"{span.parent_id:016x}"
    if message and code == 2:
        out["status"]["message"] = message
    return out


def request_json(spans: Sequence[tuple[RecordedSpan, Marks | None]], resource: dict[str, Any]) -> dict[str, Any]:
    """One request: the trace's recorded resource, spans grouped by instrumentation scope."""
    scopes: dict[str, list[dict[str, Any]]] = {}
    for span, marks in spans:
        scopes.setdefault(span.scope, []).append(span_json(span, marks))
    return {"resourceSpans": [{
        "resource": {"attributes": key_values(resource)},
        "scopeSpans": [{"scope": {"name": name}, "spans": items} for name, items in scopes.items()],
    }]}


class TraceWriter:
    """Writes one replayed trace per line: the spans a :class:`~spanbreaker.replay.feed.Feeder` kept."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def write_trace(self, spans: Sequence[tuple[RecordedSpan, Marks | None]], resource: dict[str, Any]) -> int:
        """Write the spans as one line; returns how many were written."""
        if spans:
            self.out.write(json.dumps(request_json(spans, resource), separators=(",", ":")) + "\n")
        return len(spans)
