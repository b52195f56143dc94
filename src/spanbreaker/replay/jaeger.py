"""Jaeger JSON (the UI's download, the query API's ``{"data": [...]}``) decoded into recorded spans: tags as
attributes, logs as events, the ``otel.*`` tags as status, kind and scope, the process as the resource."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .fields import MALFORMED, InputError, clip, hex_id, list_field, preview, uint
from .otlp_typed import INT64_MAX, INT64_MIN, UINT64_MAX
from .recorded import RecordedEvent, RecordedSpan

__all__ = ["jaeger_list", "jaeger_traces"]


_JAEGER_KIND = {"internal": 1, "server": 2, "client": 3, "producer": 4, "consumer": 5}


def _jaeger_value(tag: dict[str, Any]) -> Any:
    value, kind = tag.get("value"), str(tag.get("type", "string")).lower()
    if kind in ("int64", "int"):
        if value is None:
            return None
        number = int(value)
        if not INT64_MIN <= number <= INT64_MAX:
            raise ValueError("out of int64 range")
        return number
    if kind in ("float64", "float"):
        return float(value) if value is not None else None
    if kind in ("bool", "boolean"):
        return value if isinstance(value, bool) else str(value).lower() == "true"
    return None if value is None else (value if isinstance(value, (str, int, float, bool)) else str(value))


def _jaeger_tags(tags: Any, what: str, note: Callable[[str], None]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tag in list_field(tags, f"{what}: tags"):
        if not isinstance(tag, dict) or not isinstance(tag.get("key"), str):
            raise InputError(f"{what}: tag without a string key")
        try:
            value = _jaeger_value(tag)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"{what}: tag {tag['key']!r} has a value that does not match its type "
                             f"{preview(tag.get('type', 'string'))}") from None
        if value is not None:
            out[tag["key"]] = clip(tag["key"], value, what, note)
    return out


def jaeger_list(document: Any) -> list[Any] | None:
    """The traces of a Jaeger document: the query API's ``{"data": [...]}``, the UI's bare list of traces, or
    one trace object. None when the document is not Jaeger JSON."""
    if isinstance(document, dict) and isinstance(document.get("data"), list):
        return list(document["data"])
    if isinstance(document, dict) and isinstance(document.get("spans"), list):
        return [document]
    if isinstance(document, list) and document and all(isinstance(t, dict) and "spans" in t for t in document):
        return document
    return None


def jaeger_traces(document: Any, note: Callable[[str], None]) -> Iterator[tuple[dict[str, Any], RecordedSpan]]:
    """(resource, span) for every span of a Jaeger JSON document (UI download / query API ``{"data": [...]}``)."""
    traces = jaeger_list(document)
    if traces is None:
        raise InputError("not a Jaeger JSON document (no data list)")
    for t_index, trace in enumerate(traces):
        if not isinstance(trace, dict):
            note(f"data[{t_index}] is not an object; skipped")
            continue
        processes = trace.get("processes") or {}
        spans = trace.get("spans")
        if not isinstance(spans, list):
            note(f"data[{t_index}]: spans is not a list; skipped")
            continue
        for index, raw in enumerate(spans):
            what = f"data[{t_index}].spans[{index}]"
            try:
                yield _jaeger_span(raw, processes, what, note)
            except InputError as exc:
                note(f"{exc}; span skipped")
            except MALFORMED as exc:
                note(f"{what}: malformed ({type(exc).__name__}: {exc}); span skipped")


def _jaeger_span(raw: Any, processes: Any, what: str,
                 note: Callable[[str], None]) -> tuple[dict[str, Any], RecordedSpan]:
    if not isinstance(raw, dict):
        raise InputError(f"{what} is not an object")
    name = str(raw.get("operationName") or "")
    if name:
        what = f"{what} ({name[:60]!r})"
    trace_id = hex_id(raw.get("traceID"), 16, f"{what}: traceID")
    span_id = hex_id(raw.get("spanID"), 8, f"{what}: spanID")
    parent_id = None
    for ref in list_field(raw.get("references"), f"{what}: references"):
        if isinstance(ref, dict) and ref.get("refType", "CHILD_OF") == "CHILD_OF" and ref.get("spanID"):
            parent_id = hex_id(ref.get("spanID"), 8, f"{what}: references.spanID")
            break
    if parent_id is None and raw.get("parentSpanID") not in (None, "", "0", "0000000000000000"):
        parent_id = hex_id(raw.get("parentSpanID"), 8, f"{what}: parentSpanID")
    start_us = uint(raw.get("startTime", 0), f"{what}: startTime", UINT64_MAX // 1000)  # microseconds
    start, end = start_us * 1000, (start_us + uint(raw.get("duration", 0), f"{what}: duration",
                                                   UINT64_MAX // 1000 - start_us)) * 1000
    tags = _jaeger_tags(raw.get("tags"), what, note)
    process = raw.get("process") if isinstance(raw.get("process"), dict) else (
        processes.get(raw.get("processID")) if isinstance(processes, dict) else None)
    resource: dict[str, Any] = {}
    if isinstance(process, dict):
        resource = _jaeger_tags(process.get("tags"), f"{what}: process", note)
        if process.get("serviceName"):
            resource.setdefault("service.name", str(process["serviceName"]))
    events = []
    for log in list_field(raw.get("logs"), f"{what}: logs"):
        if not isinstance(log, dict):
            continue
        fields = _jaeger_tags(log.get("fields"), f"{what}: log", note)
        event_name = str(fields.pop("event", "log"))
        at = uint(log.get("timestamp", 0), f"{what}: log", UINT64_MAX // 1000) * 1000
        events.append(RecordedEvent(event_name, at, fields))
    status_text = str(tags.pop("otel.status_code", "")).upper()
    status_message = str(tags.pop("otel.status_description", ""))
    status = 2 if status_text == "ERROR" or tags.get("error") is True else 1 if status_text == "OK" else 0
    kind = _JAEGER_KIND.get(str(tags.pop("span.kind", "internal")).lower(), 1)
    scope = str(tags.pop("otel.scope.name", tags.pop("otel.library.name", "")))
    for key in ("otel.scope.version", "otel.library.version", "internal.span.format"):
        tags.pop(key, None)
    if status == 2:
        tags.pop("error", None)
    span = RecordedSpan(trace_id, span_id, parent_id, name, kind, start, end, tags, events, status,
                        status_message, scope)
    return resource, span
