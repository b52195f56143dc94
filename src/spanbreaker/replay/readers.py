"""Read recorded traces: OTLP/JSON (one request per line, or one request per file) and Jaeger JSON, plain or gzip.

Why a reader of our own rather than the SDK's: the SDK has no OTLP/JSON *decoder*, and replay must survive the
files people actually have (a cut-off gzip, a stray log line, a span without ids, a 50 MB attribute). Every
such defect becomes a :class:`Problem` naming the file and line, and reading goes on with the rest.

Spans are grouped per trace. In the line-per-request form a trace may be spread over several lines (the
Collector's file exporter writes batches); a trace is handed on once its root span has been read at the end of
a line (the root ends last, so it comes in the last batch), and whatever is left at the end of the file.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import gzip
import io
import itertools
import json
import math
import re
import reprlib
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from . import otlp_typed
from .gunzip import INFLATE_ERRORS, READ_ERRORS, open_gzip
from .otlp_typed import INT64_MAX, INT64_MIN, UINT64_MAX, UNSET
from .shard import Shard

MAX_RECORD_BYTES = 64 * 1024 * 1024
"""Largest record read, in bytes (after gzip): one line of a line-per-request file, or a whole-file document
(one request, Jaeger JSON). A longer line is skipped with a problem and the lines after it are read; a larger
document is skipped. Why bytes, read as bytes: what the reader holds is then bounded whatever the characters (held
as text, a line of 4-byte characters is 4x its character count); decoded, one record takes a few times its size
(up to ~25x for a record of nothing but empty arrays), and only one record is held at a time."""
MAX_ATTRIBUTE_CHARS = 1024 * 1024
"""Longest attribute value kept; longer ones are cut (the processor reads only head and tail anyway)."""
MAX_SPANS_PER_TRACE = 200_000
MAX_HELD_SPANS = 1_000_000
"""Spans held at once in traces waiting for their root span; past it the traces held longest are handed on."""
MALFORMED = (TypeError, ValueError, AttributeError, KeyError, OverflowError, RecursionError)
"""What a record shaped unlike anything expected may raise while decoded; caught per span, line and file."""
TRACE_FILE_SUFFIXES = (".json", ".jsonl", ".ndjson", ".otlp", ".gz")


@dataclass(frozen=True)
class Problem:
    """Something in the input that was skipped or altered. ``line`` is 1-based, 0 when unknown."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class RecordedEvent:
    name: str
    time_unix_nano: int
    attributes: dict[str, Any]


@dataclass
class RecordedSpan:
    """A span as recorded: ids as integers, times in ns, attributes as OTel attribute values."""

    trace_id: int
    span_id: int
    parent_id: int | None
    name: str
    kind: int
    """OTLP numbering: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer."""
    start_unix_nano: int
    end_unix_nano: int
    attributes: dict[str, Any]
    events: list[RecordedEvent] = field(default_factory=list)
    status_code: int = 0
    """OTLP numbering: 0 unset, 1 ok, 2 error."""
    status_message: str = ""
    scope: str = ""
    start_attributes: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    """The attributes the span had when it started (see :func:`start_attributes`); None until computed."""


END_ATTRIBUTE_PREFIXES = ("output.", "llm.output_messages", "llm.token_count.", "llm.cost.", "gen_ai.usage.",
                          "gen_ai.response.", "gen_ai.output.")
"""Attributes an instrumentor sets when the call returns; replay hands them to the breaker only at the span's end."""


def start_attributes(span: RecordedSpan) -> dict[str, Any]:
    """The span's attributes without those set when the call returns (computed once; the span's own dict when
    it has none of those)."""
    start = span.start_attributes
    if start is None:
        attributes = span.attributes
        start = {k: v for k, v in attributes.items() if not k.startswith(END_ATTRIBUTE_PREFIXES)}
        if len(start) == len(attributes):
            start = attributes
        span.start_attributes = start
    return start


@dataclass
class RecordedTrace:
    trace_id: int
    resource: dict[str, Any]
    spans: list[RecordedSpan]
    source: str
    """``path:line`` of the first line the trace was read from."""
    order: tuple[int, ...] = field(default=(), compare=False)
    """Where the reader handed the trace on: (file, line it was complete at, line and position of its first
    span). The reader hands traces on in this order, whatever shard it reads: ``--jobs`` merges by it."""

    @property
    def trace_id_hex(self) -> str:
        return f"{self.trace_id:032x}"


ProblemSink = Callable[[Problem], None]


class InputError(Exception):
    """A defect in one record; the caller turns it into a :class:`Problem` and goes on."""


_PREVIEW = reprlib.Repr()
_PREVIEW.maxstring = _PREVIEW.maxother = _PREVIEW.maxlong = 40
_PREVIEW.maxlevel = 2


def _preview(value: Any) -> str:
    """A short repr for a message: bounded in length and depth whatever the value (``str`` of a record nested a
    thousand deep recurses; of a 50 MB one, copies it)."""
    return _PREVIEW.repr(value)


# ----------------------------------------------------------------------------------------------- values
def _any_value(value: Any, depth: int = 0) -> Any:
    """An OTLP ``AnyValue`` as an OTel attribute value (arrays of one primitive type; maps as JSON text)."""
    if not isinstance(value, dict):
        raise InputError(f"attribute value {_preview(value)} is not an OTLP AnyValue object")
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            number = int(value["intValue"])
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"intValue {_preview(value['intValue'])} is not an integer") from None
        if not INT64_MIN <= number <= INT64_MAX:
            raise InputError(f"intValue {_preview(value['intValue'])} is out of int64 range")
        return number
    if "doubleValue" in value:
        try:
            return float(value["doubleValue"])
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"doubleValue {_preview(value['doubleValue'])} is not a number") from None
    if "bytesValue" in value:
        return str(value["bytesValue"])
    if depth > 8:
        raise InputError("attribute value nested too deeply")
    if "arrayValue" in value:
        array = value["arrayValue"] if isinstance(value["arrayValue"], dict) else {}
        items = [_any_value(v, depth + 1) for v in _list(array.get("values"), "arrayValue.values")]
        if items and all(type(i) is type(items[0]) for i in items) and isinstance(items[0], (str, bool, int, float)):
            return tuple(items)
        return json.dumps(items, default=str)
    if "kvlistValue" in value:
        kvlist = value["kvlistValue"] if isinstance(value["kvlistValue"], dict) else {}
        pairs = [p for p in _list(kvlist.get("values"), "kvlistValue.values") if isinstance(p, dict)]
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
        out[item["key"]] = _clip(item["key"], value, what, note)
    return out


def _clip(key: str, value: Any, what: str, note: Callable[[str], None]) -> Any:
    if isinstance(value, str) and len(value) > MAX_ATTRIBUTE_CHARS:
        note(f"{what}: attribute {key!r} has {len(value):,} characters; cut to {MAX_ATTRIBUTE_CHARS:,}")
        return value[: MAX_ATTRIBUTE_CHARS // 2] + value[-MAX_ATTRIBUTE_CHARS // 2:]
    return value


def _list(value: Any, what: str) -> list[Any]:
    """A JSON array field (absent or null is empty); anything else is a defect of the record."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{what} is not a list")
    return value


def _hex_id(raw: Any, nbytes: int, what: str) -> int:
    """An id in OTLP/JSON's hex form, or protobuf-JSON's base64 form; never zero."""
    if not isinstance(raw, str) or not raw:
        raise InputError(f"{what} is missing")
    text = raw.strip()
    value: int | None = None
    if len(text) <= nbytes * 2 and all(c in "0123456789abcdefABCDEF" for c in text):
        value = int(text, 16)
    else:
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            data = b""
        if len(data) == nbytes:
            value = int.from_bytes(data, "big")
    if value is None:
        raise InputError(f"{what} {text[:40]!r} is not a {nbytes}-byte hex or base64 id")
    if value == 0:
        raise InputError(f"{what} is all zeros (invalid)")
    return value


def _int(raw: Any, what: str, top: int = UINT64_MAX) -> int:
    """A non-negative integer up to ``top`` (JSON numbers and numbers in text, as OTLP/JSON writes 64-bit ones)."""
    if isinstance(raw, float) and not math.isfinite(raw):
        raise InputError(f"{what} {raw} is not finite")
    try:
        value = int(raw)
    except (TypeError, ValueError):  # also text past Python's int digit limit
        raise InputError(f"{what} {_preview(raw)} is not an integer") from None
    if value < 0:
        raise InputError(f"{what} is negative")
    if value > top:
        raise InputError(f"{what} {_preview(raw)} is out of range (above {top:,})")
    return value


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
    trace_id = _hex_id(raw.get("traceId"), 16, f"{what}: traceId")
    span_id = _hex_id(raw.get("spanId"), 8, f"{what}: spanId")
    parent_raw = raw.get("parentSpanId")
    parent_id = _hex_id(parent_raw, 8, f"{what}: parentSpanId") if parent_raw else None
    start = _int(raw.get("startTimeUnixNano", 0), f"{what}: startTimeUnixNano")
    end = _int(raw.get("endTimeUnixNano", start), f"{what}: endTimeUnixNano")
    events = []
    for event in _list(raw.get("events"), f"{what}: events"):
        if not isinstance(event, dict):
            continue
        events.append(RecordedEvent(str(event.get("name", "")), _int(event.get("timeUnixNano", end), f"{what}: event"),
                                    _attributes(event.get("attributes"), f"{what}: event", note)))
    status = raw.get("status") or {}
    return RecordedSpan(
        trace_id=trace_id, span_id=span_id, parent_id=parent_id, name=str(name or ""),
        kind=_enum(raw.get("kind", 0), _KIND_NAMES, 5), start_unix_nano=start, end_unix_nano=max(end, start),
        attributes=_attributes(raw.get("attributes"), what, note), events=events,
        status_code=_enum(status.get("code", 0), _STATUS_NAMES, 2) if isinstance(status, dict) else 0,
        status_message=str(status.get("message", "")) if isinstance(status, dict) else "", scope=scope,
    )


# ----------------------------------------------------------------------------------------------- Jaeger
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
    for tag in _list(tags, f"{what}: tags"):
        if not isinstance(tag, dict) or not isinstance(tag.get("key"), str):
            raise InputError(f"{what}: tag without a string key")
        try:
            value = _jaeger_value(tag)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"{what}: tag {tag['key']!r} has a value that does not match its type "
                             f"{_preview(tag.get('type', 'string'))}") from None
        if value is not None:
            out[tag["key"]] = _clip(tag["key"], value, what, note)
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
    trace_id = _hex_id(raw.get("traceID"), 16, f"{what}: traceID")
    span_id = _hex_id(raw.get("spanID"), 8, f"{what}: spanID")
    parent_id = None
    for ref in _list(raw.get("references"), f"{what}: references"):
        if isinstance(ref, dict) and ref.get("refType", "CHILD_OF") == "CHILD_OF" and ref.get("spanID"):
            parent_id = _hex_id(ref.get("spanID"), 8, f"{what}: references.spanID")
            break
    if parent_id is None and raw.get("parentSpanID") not in (None, "", "0", "0000000000000000"):
        parent_id = _hex_id(raw.get("parentSpanID"), 8, f"{what}: parentSpanID")
    start_us = _int(raw.get("startTime", 0), f"{what}: startTime", UINT64_MAX // 1000)  # microseconds
    start, end = start_us * 1000, (start_us + _int(raw.get("duration", 0), f"{what}: duration",
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
    for log in _list(raw.get("logs"), f"{what}: logs"):
        if not isinstance(log, dict):
            continue
        fields = _jaeger_tags(log.get("fields"), f"{what}: log", note)
        event_name = str(fields.pop("event", "log"))
        at = _int(log.get("timestamp", 0), f"{what}: log", UINT64_MAX // 1000) * 1000
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


# ------------------------------------------------------------------------------------------------ files
def expand_paths(paths: Iterable[str | Path], note: ProblemSink) -> list[Path]:
    """Files named, and the trace files (by suffix) of directories named, sorted; missing paths noted."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(TRACE_FILE_SUFFIXES))
            if not found:
                note(Problem(str(path), 0, "directory holds no trace files (*.json, *.jsonl, *.ndjson, *.gz)"))
            out.extend(found)
        elif path.is_file():
            out.append(path)
        else:
            note(Problem(str(path), 0, "no such file or directory"))
    return out


_READ_CHUNK = 1024 * 1024
"""Bytes read at a time when reading past an over-long line or filling a document's buffer."""
_REQUEST_START = re.compile(rb'\s*\{\s*"(resourceSpans|batches|result)"')
"""How an OTLP/JSON request line begins (the Collector writes ``resourceSpans`` first): judges a line cut at the cap."""


def _open_bytes(path: Path, stack: contextlib.ExitStack) -> tuple[io.BufferedIOBase, io.BufferedReader]:
    """The bytes of a plain or gzip file, told apart by the gzip magic number, not the name; and the raw file
    (its position is the progress through the file)."""
    raw = stack.enter_context(path.open("rb"))
    if raw.peek(2)[:2] == b"\x1f\x8b":
        return stack.enter_context(open_gzip(raw)), raw
    return raw, raw


def _lines(fh: io.BufferedIOBase, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, line) for every line, as bytes, each at most ``limit`` bytes. A longer line is read past in
    chunks and given as None: one record never makes the reader hold more than its cap, whatever the line holds."""
    number = 0
    while True:
        line = fh.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            while True:
                more = fh.readline(_READ_CHUNK)
                if not more or more.endswith(b"\n"):
                    break
            yield number, None
        else:
            yield number, line


class _NotJSON(Exception):
    """A record json cannot decode; ``line`` is 1-based within the record (0 unknown), ``truncated`` when the text
    ended first."""

    def __init__(self, message: str, line: int = 0, truncated: bool = False) -> None:
        super().__init__(message)
        self.message, self.line, self.truncated = message, line, truncated


def _text(data: bytes | bytearray) -> str:
    """UTF-8 text (a byte-order mark dropped); bytes that are not UTF-8 become U+FFFD rather than end the read."""
    return data.decode("utf-8-sig", "replace")


def _loads(text: str) -> Any:
    """``json.loads``, with every way it fails on bad input as :class:`_NotJSON`: a syntax error, nesting past the
    parser's recursion limit (RecursionError), an integer past Python's digit limit (ValueError), and a record too
    big for the memory left (MemoryError)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        truncated = not text[exc.pos:].strip()
        raise _NotJSON(f"{exc.msg} at column {exc.colno}", exc.lineno, truncated) from None
    except RecursionError:
        raise _NotJSON("nested deeper than the JSON parser can follow") from None
    except ValueError as exc:
        raise _NotJSON(str(exc).split(";")[0]) from None
    except MemoryError:
        raise _NotJSON("too large to decode in the memory available") from None


def _loads_bytes(data: bytes) -> Any:
    """A record decoded by orjson (several times faster than ``json``, straight from the bytes); whatever orjson
    refuses (not UTF-8, a byte-order mark, NaN, infinity, nesting past its limit, bad JSON) is decoded by
    :func:`_loads` as before, so such input reads as it did. One difference: orjson reads an integer past 64 bits
    as a float; every field replay reads a number from rejects such a value either way (ids and times are at most
    64 bits, ``intValue`` 63), only the message then shows it as a float."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return _loads(_text(data))


def _is_request(text: str) -> bool:
    if not text.lstrip().startswith("{"):
        return False
    try:
        return otlp_body(_loads(text)) is not None
    except _NotJSON:
        return False


def _has_request_line(text: str, cut: bool) -> bool:
    """Whether a line of ``text`` is an OTLP/JSON request, i.e. the file is one request per line. ``cut``: the
    text stops at the cap, so its last line is incomplete and is judged by how it begins."""
    lines = io.StringIO(text)
    for line in lines:
        if line.endswith("\n") or not cut:
            if _is_request(line):
                return True
        elif _REQUEST_START.match(line.encode("utf-8", "replace")[:64]):
            return True
    return False


@dataclass
class _Head:
    """The start of a file that may be one document: up to the cap and one byte more."""

    data: bytearray
    over: bool
    """Larger than the cap: the file is not read as one document."""
    error: Exception | None = None
    """A gzip or read error that ended the read."""


def _read_head(fh: io.BufferedIOBase, limit: int) -> _Head:
    data = bytearray()
    try:
        while len(data) <= limit:
            chunk = fh.read(min(_READ_CHUNK, limit + 1 - len(data)))
            if not chunk:
                break
            data += chunk
    except READ_ERRORS as exc:
        return _Head(data, len(data) > limit, exc)
    return _Head(data, len(data) > limit)


def _read_error(exc: Exception) -> str:
    detail = "truncated or corrupt gzip" if isinstance(exc, (EOFError, gzip.BadGzipFile, *INFLATE_ERRORS)) else "read"
    return f"{detail} error: {exc}; the rest of the file is skipped"


class _Grouper:
    """Collects spans per trace and hands a trace on once its root is in and a line after it brought none of its
    spans. The Collector writes a span when it ends, so a trace's root comes last and the next line completes it; a
    converter or exporter that writes spans as they start puts the root first, and the lines after it still belong
    to the trace (handed on at its root's line, such a trace was cut into its root and a fragment per later line).

    A trace whose root never comes (a service whose local roots have remote parents, a cut recording) would be
    held to the end of the file; past :data:`MAX_HELD_SPANS` held spans the traces held longest are handed on as
    read so far, so memory does not grow with the file.
    """

    def __init__(self, path: str, note: ProblemSink, shard: Shard | None = None) -> None:
        self.path = path
        self.note = note
        self.shard = shard
        self.traces: dict[int, RecordedTrace] = {}
        """Held traces, in the order their first span was read."""
        self.rooted: dict[int, int] = {}
        """Held traces whose root is in: the number of spans each held when the last line ended (-1 when its root
        came in this line), which tells whether this line brought more, without any work per span."""
        self.full: set[int] = set()
        self.order: dict[int, tuple[int, int]] = {}
        """Per held trace, where it was first read: (line, position of the span in the line's spans, counting
        those of other shards). Hands on rooted traces in file order without a scan."""
        self.line = 0
        self.position = 0
        self.held = 0
        self.overflowed = False

    def add(self, resource: dict[str, Any], span: RecordedSpan | None, line: int) -> None:
        """Hold ``span``; None (or a span of another shard) only counts a position."""
        if line != self.line:
            self.line, self.position = line, 0
        self.position += 1
        if span is None or (self.shard is not None and not self.shard.keeps(span.trace_id)):
            return
        trace = self.traces.get(span.trace_id)
        if trace is None:
            trace = RecordedTrace(span.trace_id, dict(resource), [], f"{self.path}:{line}")
            self.traces[span.trace_id] = trace
            self.order[span.trace_id] = (line, self.position)
        if len(trace.spans) >= MAX_SPANS_PER_TRACE:
            if span.trace_id not in self.full:
                self.full.add(span.trace_id)
                self.note(Problem(self.path, line, f"trace {trace.trace_id_hex} has more than "
                                                   f"{MAX_SPANS_PER_TRACE:,} spans; the rest are skipped"))
            return
        trace.spans.append(span)
        self.held += 1
        if span.parent_id is None and span.trace_id not in self.rooted:
            self.rooted[span.trace_id] = -1

    def complete(self, line: int) -> Iterator[RecordedTrace]:
        """After ``line`` (any line read, a skipped one included, so that every ``--jobs`` worker hands a trace on
        at the same line): the traces whose root is in and to which this line added no span; then, while too many
        spans are held, the traces held longest."""
        rooted = self.rooted
        if rooted:
            done = []
            for trace_id, counted in rooted.items():
                held = len(self.traces[trace_id].spans)
                if held == counted:
                    done.append(trace_id)
                else:
                    rooted[trace_id] = held
            for trace_id in sorted(done, key=self.order.__getitem__):
                yield self._pop(trace_id, line)
        while self.held > MAX_HELD_SPANS and self.traces:
            if not self.overflowed:
                self.overflowed = True
                self.note(Problem(self.path, line, f"more than {MAX_HELD_SPANS:,} spans held in traces whose root "
                                                   "span was not read yet; the traces held longest are replayed "
                                                   "as read so far (later spans of one replay as another trace)"))
            yield self._pop(next(iter(self.traces)), line)

    def _pop(self, trace_id: int, line: int) -> RecordedTrace:
        self.rooted.pop(trace_id, None)
        self.full.discard(trace_id)
        trace = self.traces.pop(trace_id)
        trace.order = (line, *self.order.pop(trace_id))
        self.held -= len(trace.spans)
        return trace

    def rest(self) -> Iterator[RecordedTrace]:
        for trace_id, trace in self.traces.items():
            trace.order = (sys.maxsize, *self.order[trace_id])
            yield trace
        self.traces.clear()
        self.order.clear()
        self.rooted.clear()
        self.held = 0


def read_file(path: Path, note: ProblemSink, progress: Callable[[int], None] | None = None,
              shard: Shard | None = None) -> Iterator[RecordedTrace]:
    """The traces of one file, in the order their first span appears; defects go to ``note``.

    A file is one request per line unless its first line is not a request and the whole file (at most
    :data:`MAX_RECORD_BYTES`) is one JSON document. Lines and documents are read as bytes and held one at a time,
    so memory is bounded by the cap in bytes whatever characters the file holds. ``progress`` is called with the
    bytes of the file consumed so far, after every line. ``shard``: only the traces it keeps.
    """
    name = str(path)
    limit = MAX_RECORD_BYTES
    grouper = _Grouper(name, note, shard)
    line_no = 0
    try:
        with contextlib.ExitStack() as stack:
            fh, raw = _open_bytes(path, stack)
            lines = _lines(fh, limit)
            first = next(((n, data) for n, data in lines if data is None or not data.isspace()), None)
            if first is None:
                note(Problem(name, 0, "file is empty"))
                return
            first_line, data = first
            # a first line over the cap is either an over-long batch or a one-line document past the cap: either
            # way that line alone is skipped and the lines after it (if any) are read
            if data is None or _is_request(_text(data)):
                lines = itertools.chain([first], lines)
            else:
                fh.seek(0)
                head = _read_head(fh, limit)
                if not _read_as_lines(head, name, first_line, note):
                    if not head.over and head.error is None:
                        yield from _read_document(head, name, first_line, note, shard)
                    return
                fh.seek(0)
                lines = _lines(fh, limit)  # from the start again, one line at a time
            for line_no, data in lines:
                if data is None:
                    note(Problem(name, line_no, f"line longer than {limit:,} bytes; skipped"))
                elif not data.isspace():
                    if shard is None or not _other_shards_only(data, shard):
                        _add_line(grouper, data, name, line_no, note, shard)
                    yield from grouper.complete(line_no)
                if progress is not None:
                    progress(raw.tell())
    except READ_ERRORS as exc:
        note(Problem(name, line_no + 1, _read_error(exc)))
    yield from grouper.rest()


def _read_as_lines(head: _Head, name: str, first_line: int, note: ProblemSink) -> bool:
    """Whether a file whose first line is not a request is still read line by line: it has a request line (a
    line-per-request file with a damaged start). When not, a head that cannot be a document is reported here."""
    text = _text(head.data)
    if _has_request_line(text, cut=head.over or head.error is not None):
        return True
    if head.error is not None:
        note(Problem(name, text.count("\n") + 1, _read_error(head.error)))
    elif head.over:
        note(Problem(name, 0, f"document larger than {MAX_RECORD_BYTES:,} bytes and not one request per line; "
                              "file skipped"))
    return False


_TRACE_ID_KEY = b'"traceId"'
_TRACE_ID_VALUE = re.compile(rb'\s*:\s*"([0-9a-fA-F]{1,32})"')


def _other_shards_only(data: bytes, shard: Shard) -> bool:
    """Whether a request line holds only other shards' traces, told from its bytes without decoding it: every
    ``"traceId"`` in it is a hex id, and none of them is this shard's. Anything else (an id in base64, no id, a
    line that is not JSON) is decoded as usual; a defect in a skipped line is its owning shard's to report.

    Each key is found with ``bytes.find`` (a C substring search) and its value read by a regex anchored right
    after it: a regex searching the whole line would step through every byte of it."""
    at = data.find(_TRACE_ID_KEY)
    if at < 0:
        return False
    last = b""
    while at >= 0:
        match = _TRACE_ID_VALUE.match(data, at + len(_TRACE_ID_KEY))
        if match is None:
            return False
        found = match.group(1)
        if found != last:  # a trace's spans come together: its id is hashed once per run of them
            if shard.keeps(int(found, 16)):
                return False
            last = found
        at = data.find(_TRACE_ID_KEY, match.end())
    return True


def _typed_spans(data: bytes, shard: Shard | None) -> list[tuple[dict[str, Any], RecordedSpan | None]] | None:
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


def _add_line(grouper: _Grouper, data: bytes, name: str, line_no: int, note: ProblemSink,
              shard: Shard | None = None) -> None:
    typed = _typed_spans(data, shard)
    if typed is not None:
        for resource, span in typed:
            grouper.add(resource, span, line_no)
        return
    line_note = _line_note(note, name, line_no)
    try:
        document = _loads_bytes(data)
    except _NotJSON as exc:
        line_note(f"not JSON ({exc.message}); line skipped")
        return
    try:
        for resource, span in otlp_spans(document, line_note, shard):
            grouper.add(resource, span, line_no)
    except InputError as exc:
        line_note(f"{exc}; line skipped")
    except MALFORMED as exc:
        line_note(f"malformed request ({type(exc).__name__}: {_preview(exc)}); rest of the line skipped")


def _line_note(note: ProblemSink, name: str, line: int) -> Callable[[str], None]:
    return lambda message: note(Problem(name, line, message))


def _read_document(head: _Head, name: str, first_line: int, note: ProblemSink,
                   shard: Shard | None = None) -> Iterator[RecordedTrace]:
    """A whole-file document: one OTLP request (maybe pretty-printed) or a Jaeger JSON download."""
    text = _text(head.data)
    head.data = bytearray()  # the text is what is parsed; the bytes need not be held beside it
    try:
        document = _loads(text)
    except _NotJSON as exc:
        kind = "truncated JSON" if exc.truncated else "not JSON"
        note(Problem(name, exc.line or first_line, f"{kind} ({exc.message}); file skipped"))
        return
    del text
    grouper = _Grouper(name, note, shard)
    doc_note = _line_note(note, name, 0)
    if otlp_body(document) is not None:
        source: Iterable[tuple[dict[str, Any], RecordedSpan | None]] = otlp_spans(document, doc_note, shard)
    elif jaeger_list(document) is not None:
        source = jaeger_traces(document, doc_note)
    else:
        note(Problem(name, first_line, "wrong format: expected OTLP/JSON (resourceSpans) or Jaeger JSON (data); "
                                       "file skipped"))
        return
    try:
        for resource, span in source:
            grouper.add(resource, span, first_line)
    except InputError as exc:
        doc_note(f"{exc}; file skipped")
    except MALFORMED as exc:
        doc_note(f"malformed document ({type(exc).__name__}: {_preview(exc)}); rest of the file skipped")
    yield from grouper.rest()


def read_traces(paths: Iterable[str | Path], note: ProblemSink,
                progress: Callable[[int, int], None] | None = None, shard: Shard | None = None,
                only_files: frozenset[int] | None = None) -> Iterator[RecordedTrace]:
    """Every trace of every file (directories expanded), file by file; with ``shard``, those it keeps.

    ``progress(done, total)`` gets bytes consumed and total bytes over all files read (for a progress bar).
    ``only_files``: read only the files at these positions of the expanded list (a ``--jobs`` worker's share;
    traces keep their position in the whole list, so workers' verdicts merge in input order).
    """
    files = expand_paths(paths, note)
    total = sum(_size(p) for index, p in enumerate(files) if only_files is None or index in only_files)
    done = 0
    for index, path in enumerate(files):
        if only_files is not None and index not in only_files:
            continue
        step = None if progress is None else (lambda at, base=done: progress(base + at, total))
        for trace in read_file(path, note, step, shard):
            trace.order = (index, *trace.order)
            yield trace
        done += _size(path)
        if progress is not None:
            progress(done, total)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
