"""OTLP/JSON requests decoded into recorded spans: the typed fast path for a well-formed request line (msgspec,
:mod:`.otlp_typed`), the fast path over parsed JSON for a well-formed span, and the careful path that names every
defect.

The careful path decides; each fast path takes only input it reads exactly as the careful path would, and hands
anything else on to it (a value to clip, an id in base64, a field of another type), so no fast path ever decides
differently.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from . import otlp_typed
from .fields import MALFORMED, MAX_ATTRIBUTE_CHARS, InputError, clip, hex_id, list_field, preview, uint
from .otlp_typed import INT64_MAX, INT64_MIN, UNSET
from .recorded import END_ATTRIBUTE_PREFIXES, RecordedEvent, RecordedSpan
from .shard import Shard

__all__ = ["otlp_body", "otlp_spans", "typed_spans"]


# ----------------------------------------------------------------------------------------------- values
def _any_value(value: Any, depth: int = 0) -> Any:
    """An OTLP ``AnyValue`` as an OTel attribute value (arrays of one primitive type; maps as JSON text)."""
    if not isinstance(value, dict):
        raise InputError(f"attribute value {preview(value)} is not an OTLP AnyValue object")
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            number = int(value["intValue"])
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"intValue {preview(value['intValue'])} is not an integer") from None
        if not INT64_MIN <= number <= INT64_MAX:
            raise InputError(f"intValue {preview(value['intValue'])} is out of int64 range")
        return number
    if "doubleValue" in value:
        try:
            return float(value["doubleValue"])
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"doubleValue {preview(value['doubleValue'])} is not a number") from None
    if "bytesValue" in value:
        return str(value["bytesValue"])
    if depth > 8:
        raise InputError("attribute value nested too deeply")
    if "arrayValue" in value:
        array = value["arrayValue"] if isinstance(value["arrayValue"], dict) else {}
        items = [_any_value(v, depth + 1) for v in list_field(array.get("values"), "arrayValue.values")]
        if items and all(type(i) is type(items[0]) for i in items) and isinstance(items[0], (str, bool, int, float)):
            return tuple(items)
        return json.dumps(items, default=str)
    if "kvlistValue" in value:
        kvlist = value["kvlistValue"] if isinstance(value["kvlistValue"], dict) else {}
        pairs = [p for p in list_field(kvlist.get("values"), "kvlistValue.values") if isinstance(p, dict)]
        return json.dumps({str(p.get("key")): _any_value(p.get("value", {}), depth + 1) for p in pairs},
                          default=str)
    return None  # an empty AnyValue: OTLP's "no value"


def _attributes(items: Any, what: str, note: Callable[[str], None]) -> dict[str, Any]:
    if items is None:
        return {}
    if not isinstance(items, list):
        raise InputError(f"{what}: attributes is not a list")
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise InputError(f"{what}: attribute without a string key")
        value = _any_value(item.get("value", {}))
        if value is None:
            continue
        out[item["key"]] = clip(item["key"], value, what, note)
    return out

_KIND_NAMES = {"SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2, "SPAN_KIND_CLIENT": 3,
               "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5}
_STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


def _enum(raw: Any, names: dict[str, int], top: int) -> int:
    if isinstance(raw, str):
        return names.get(raw, int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 4 and int(raw) <= top else 0)
    if isinstance(raw, int) and 0 <= raw <= top:
        return raw
    return 0


# ------------------------------------------------------------------------------------------------- OTLP
def otlp_body(document: Any) -> list[Any] | None:
    """The ``resourceSpans`` list of an OTLP/JSON request; also under Jaeger's API v3 ``result`` wrapper and
    Tempo's ``batches`` name. None when the document is not OTLP."""
    if isinstance(document, dict) and isinstance(document.get("result"), dict):
        document = document["result"]
    if not isinstance(document, dict):
        return None
    body = document.get("resourceSpans", document.get("batches"))
    return body if isinstance(body, list) else None


def otlp_spans(request: Any, note: Callable[[str], None], shard: Shard | None = None
               ) -> Iterator[tuple[dict[str, Any], RecordedSpan | None]]:
    """(resource attributes, span) for every span of an ``ExportTraceServiceRequest``; bad spans are noted. A span
    of another shard (its trace id read without decoding the span) comes as (resource, None), undecoded."""
    body = otlp_body(request)
    if body is None:
        raise InputError("not an OTLP/JSON ExportTraceServiceRequest (no resourceSpans list)")
    for r_index, resource_spans in enumerate(body):
        if not isinstance(resource_spans, dict):
            note(f"resourceSpans[{r_index}] is not an object; skipped")
            continue
        try:
            resource_obj = resource_spans.get("resource")
            resource = _attributes(resource_obj.get("attributes") if isinstance(resource_obj, dict) else None,
                                   f"resourceSpans[{r_index}].resource", note)
        except InputError as exc:
            note(f"{exc}; resource attributes ignored")
            resource = {}
        scope_list = resource_spans.get("scopeSpans", resource_spans.get("instrumentationLibrarySpans"))
        if not isinstance(scope_list, list):
            note(f"resourceSpans[{r_index}]: scopeSpans is not a list; skipped")
            continue
        for s_index, scope_spans in enumerate(scope_list):
            if not isinstance(scope_spans, dict):
                continue
            scope_obj = scope_spans.get("scope", scope_spans.get("instrumentationLibrary")) or {}
            scope = str(scope_obj.get("name", "")) if isinstance(scope_obj, dict) else ""
            spans = scope_spans.get("spans")
            if not isinstance(spans, list):
                note(f"resourceSpans[{r_index}].scopeSpans[{s_index}]: spans is not a list; skipped")
                continue
            for index, raw in enumerate(spans):
                if shard is not None and type(raw) is dict:
                    trace_id = _fast_id(raw.get("traceId"), 32)
                    if trace_id is not None and not shard.keeps(trace_id):
                        yield resource, None
                        continue
                fast = _fast_span(raw, scope)
                if fast is not None:
                    yield resource, fast
                    continue
                what = f"span {index} of resourceSpans[{r_index}].scopeSpans[{s_index}]"
                try:
                    yield resource, _otlp_span(raw, scope, what, note)
                except InputError as exc:
                    note(f"{exc}; span skipped")
                except MALFORMED as exc:
                    note(f"{what}: malformed ({type(exc).__name__}: {exc}); span skipped")


# The fast path: the common, well-formed span decoded with few Python calls per attribute. It returns None at the
# first thing it does not expect (a defect, a value to clip, an id in base64), and the careful path below decodes
# that span again with its messages: the fast path never decides anything the careful one would decide otherwise.
def _fast_id(raw: Any, digits: int) -> int | None:
    """A hex id as the typed decoder reads it (:func:`.otlp_typed.span_id`), or None."""
    if type(raw) is not str:
        return None
    try:
        return otlp_typed.span_id(raw, digits)
    except otlp_typed.Defer:
        return None


def _fast_int(raw: Any) -> int | None:
    """A time as the typed decoder reads it (:func:`.otlp_typed.time_ns`), or None."""
    try:
        return otlp_typed.time_ns(raw)
    except otlp_typed.Defer:
        return None


def _fast_attributes(items: Any) -> dict[str, Any] | None:
    if items is None:
        return {}
    if type(items) is not list:
        return None
    out: dict[str, Any] = {}
    for item in items:
        if type(item) is not dict:
            return None
        key, value = item.get("key"), item.get("value", {})
        if type(key) is not str or type(value) is not dict:
            return None
        text = value.get("stringValue")
        if type(text) is not str:
            try:
                text = _any_value(value)
            except (InputError, *MALFORMED):
                return None
            if text is None:
                continue
            if type(text) is not str:
                out[key] = text
                continue
        if len(text) > MAX_ATTRIBUTE_CHARS:
            return None
        out[key] = text
    return out


def _fast_span(raw: Any, scope: str) -> RecordedSpan | None:
    """A well-formed OTLP/JSON span as :func:`_otlp_span` decodes it, or None (see above)."""
    if type(raw) is not dict:
        return None
    trace_id = _fast_id(raw.get("traceId"), 32)
    span_id = _fast_id(raw.get("spanId"), 16)
    if trace_id is None or span_id is None:
        return None
    parent_raw = raw.get("parentSpanId")
    parent_id = None
    if parent_raw:
        parent_id = _fast_id(parent_raw, 16)
        if parent_id is None:
            return None
    start = _fast_int(raw.get("startTimeUnixNano", 0))
    end = _fast_int(raw["endTimeUnixNano"]) if "endTimeUnixNano" in raw else start
    if start is None or end is None:
        return None
    attributes = _fast_attributes(raw.get("attributes"))
    if attributes is None:
        return None
    events = []
    raw_events = raw.get("events")
    if raw_events:
        if type(raw_events) is not list:
            return None
        for event in raw_events:
            if type(event) is not dict:
                continue
            at = _fast_int(event.get("timeUnixNano", end))
            event_attributes = _fast_attributes(event.get("attributes"))
            if at is None or event_attributes is None:
                return None
            events.append(RecordedEvent(str(event.get("name", "")), at, event_attributes))
    elif raw_events is not None and type(raw_events) is not list:
        return None
    name = raw.get("name")
    status = raw.get("status") or {}
    if type(status) is dict:
        code, message = _enum(status.get("code", 0), _STATUS_NAMES, 2), str(status.get("message", ""))
    else:
        code, message = 0, ""
    return RecordedSpan(trace_id, span_id, parent_id, str(name or ""), _enum(raw.get("kind", 0), _KIND_NAMES, 5),
                        start, max(end, start), attributes, events, code, message, scope)


def _otlp_span(raw: Any, scope: str, what: str, note: Callable[[str], None]) -> RecordedSpan:
    if not isinstance(raw, dict):
        raise InputError(f"{what} is not an object")
    name = raw.get("name")
    if isinstance(name, str) and name:
        what = f"{what} ({name[:60]!r})"
    trace_id = hex_id(raw.get("traceId"), 16, f"{what}: traceId")
    span_id = hex_id(raw.get("spanId"), 8, f"{what}: spanId")
    parent_raw = raw.get("parentSpanId")
    parent_id = hex_id(parent_raw, 8, f"{what}: parentSpanId") if parent_raw else None
    start = uint(raw.get("startTimeUnixNano", 0), f"{what}: startTimeUnixNano")
    end = uint(raw.get("endTimeUnixNano", start), f"{what}: endTimeUnixNano")
    events = []
    for event in list_field(raw.get("events"), f"{what}: events"):
        if not isinstance(event, dict):
            continue
        events.append(RecordedEvent(str(event.get("name", "")), uint(event.get("timeUnixNano", end), f"{what}: event"),
                                    _attributes(event.get("attributes"), f"{what}: event", note)))
    status = raw.get("status") or {}
    return RecordedSpan(
        trace_id=trace_id, span_id=span_id, parent_id=parent_id, name=str(name or ""),
        kind=_enum(raw.get("kind", 0), _KIND_NAMES, 5), start_unix_nano=start, end_unix_nano=max(end, start),
        attributes=_attributes(raw.get("attributes"), what, note), events=events,
        status_code=_enum(status.get("code", 0), _STATUS_NAMES, 2) if isinstance(status, dict) else 0,
        status_message=str(status.get("message", "")) if isinstance(status, dict) else "", scope=scope,
    )


# ---------------------------------------------------------------------------------- typed request lines
def typed_spans(data: bytes, shard: Shard | None) -> list[tuple[dict[str, Any], RecordedSpan | None]] | None:
    """(resource, span) for every span of a well-formed request line decoded by msgspec (:mod:`.otlp_typed`),
    as :func:`otlp_spans` gives them; None for a line the general reader must read (it then decides)."""
    request = otlp_typed.decode(data)
    if request is None:
        return None
    cap, read_time, read_attributes, read_id = (MAX_ATTRIBUTE_CHARS, otlp_typed.time_ns, otlp_typed.attributes,
                                                otlp_typed.span_id)
    out: list[tuple[dict[str, Any], RecordedSpan | None]] = []
    last_text: str | None = None  # a trace's spans come together: its id is read once per run of them
    trace_id, kept = 0, True
    try:
        for resource_spans in request.resourceSpans:
            resource_obj = resource_spans.resource
            resource = {} if resource_obj is None else read_attributes(resource_obj.attributes, cap)[0]
            scope_list = resource_spans.scopeSpans
            if scope_list is UNSET:
                return None
            for scope_spans in scope_list:
                scope_obj = scope_spans.scope
                if scope_obj is UNSET and scope_spans.instrumentationLibrary is not UNSET:
                    return None
                scope = scope_obj.name if scope_obj is not UNSET and scope_obj is not None else ""
                spans = scope_spans.spans
                if spans is UNSET:
                    return None
                for raw in spans:
                    if raw.traceId != last_text:
                        trace_id = read_id(raw.traceId, 32)
                        last_text, kept = raw.traceId, shard is None or shard.keeps(trace_id)
                    if not kept:
                        out.append((resource, None))
                        continue
                    parent = raw.parentSpanId
                    start = read_time(raw.startTimeUnixNano)
                    end = start if raw.endTimeUnixNano is UNSET else read_time(raw.endTimeUnixNano)
                    events = []
                    if raw.events:
                        for event in raw.events:
                            at = end if event.timeUnixNano is UNSET else read_time(event.timeUnixNano)
                            events.append(RecordedEvent(event.name, at, read_attributes(event.attributes, cap)[0]))
                    status = raw.status
                    code, message = (0, "") if status is None else (_enum(status.code, _STATUS_NAMES, 2),
                                                                   status.message)
                    attributes, at_start = read_attributes(raw.attributes, cap, END_ATTRIBUTE_PREFIXES)
                    out.append((resource, RecordedSpan(
                        trace_id, read_id(raw.spanId, 16), read_id(parent, 16) if parent else None, raw.name or "",
                        _enum(raw.kind, _KIND_NAMES, 5), start, max(end, start), attributes, events, code, message,
                        scope, at_start)))
    except otlp_typed.Defer:
        return None
    return out
