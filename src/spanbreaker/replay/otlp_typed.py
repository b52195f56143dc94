"""The common OTLP/JSON request line, decoded straight into typed objects by msgspec.

Why: decoding JSON into dicts and then walking them in Python (type checks, ``.get``, a regex per id) cost more
than the JSON parse itself, about 60,000 instructions per span. msgspec parses the line into the structs below
in C, checking types and id shapes as it goes, so what is left in Python is a few attribute reads per span.

What it decides: nothing the general reader (:func:`~spanbreaker.replay.otlp_json.otlp_spans`) would decide
otherwise. It takes only a line that is well formed in every respect the general reader checks, and gives the
same spans. Anything else (a field of another type, an id in base64, an array attribute, a value to clip, a
legacy field name, a ``result`` wrapper) makes :func:`typed_spans` return None, and the line is read by the
general reader, with its messages, exactly as before.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

UNSET = msgspec.UNSET
_Unset = msgspec.UnsetType

# Every struct below is ``gc=False``: decoded JSON holds no reference cycle, and an instance the collector does not
# track costs less to make and triggers no collection (a line makes one per attribute; reading the 500-run file went
# from 0.355 to 0.335 s of CPU).


class _Value(msgspec.Struct, gc=False):
    stringValue: str | _Unset = UNSET
    boolValue: bool | _Unset = UNSET
    intValue: int | str | _Unset = UNSET
    doubleValue: msgspec.Raw | _Unset = UNSET
    bytesValue: msgspec.Raw | _Unset = UNSET
    arrayValue: msgspec.Raw | _Unset = UNSET
    kvlistValue: msgspec.Raw | _Unset = UNSET


class _KeyValue(msgspec.Struct, gc=False):
    key: str
    value: _Value | _Unset = UNSET


class _Status(msgspec.Struct, gc=False):
    code: int | str = 0
    message: str = ""


class _Event(msgspec.Struct, gc=False):
    name: str = ""
    timeUnixNano: int | str | _Unset = UNSET
    attributes: list[_KeyValue] | None = None


class _Span(msgspec.Struct, gc=False):
    traceId: str
    spanId: str
    parentSpanId: str | None = None
    name: str | None = None
    kind: int | str = 0
    startTimeUnixNano: int | str = 0
    endTimeUnixNano: int | str | _Unset = UNSET
    attributes: list[_KeyValue] | None = None
    events: list[_Event] | None = None
    status: _Status | None = None


class _Scope(msgspec.Struct, gc=False):
    name: str = ""


class _ScopeSpans(msgspec.Struct, gc=False):
    scope: _Scope | _Unset | None = UNSET
    instrumentationLibrary: msgspec.Raw | _Unset = UNSET
    spans: list[_Span] | _Unset = UNSET


class _Resource(msgspec.Struct, gc=False):
    attributes: list[_KeyValue] | None = None


class _ResourceSpans(msgspec.Struct, gc=False):
    resource: _Resource | None = None
    scopeSpans: list[_ScopeSpans] | _Unset = UNSET


class _Request(msgspec.Struct, gc=False):
    resourceSpans: list[_ResourceSpans]
    result: msgspec.Raw | _Unset = UNSET


_DECODER = msgspec.json.Decoder(_Request)

UINT64_MAX = 2**64 - 1
"""OTLP times are fixed64 nanoseconds: a larger time is a defect (and would overflow the replay clock's float)."""
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
"""OTLP's ``intValue`` and Jaeger's ``int64`` tags."""


class Defer(Exception):
    """This line is for the general reader."""


def decode(data: bytes) -> _Request | None:
    """The line as a typed request, or None when it is not one (the general reader then decodes it)."""
    try:
        request = _DECODER.decode(data)
    except Exception:  # invalid JSON, UTF-8, shape or depth alike: the general reader says what is wrong
        return None
    return request if request.result is UNSET else None


def attributes(items: list[_KeyValue] | None, max_chars: int, end_prefixes: tuple[str, ...] = ()
               ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(attributes as the general reader's fast path reads them, those without the keys starting with
    ``end_prefixes``: a span's attributes at its start, see ``recorded.start_attributes``, the first dict itself
    when it has none of them); :class:`Defer` for anything the fast path would not take."""
    out: dict[str, Any] = {}
    start: dict[str, Any] = {}
    ended = False
    if items is None:
        return out, out
    for item in items:
        value = item.value
        if value is UNSET:
            continue  # no value at all: OTLP's "no value", skipped
        key = item.key
        text = value.stringValue
        if text is not UNSET:
            if len(text) > max_chars:
                raise Defer
            read: Any = text
        elif value.boolValue is not UNSET:
            read = value.boolValue
        elif value.intValue is not UNSET:
            number = value.intValue
            if type(number) is not int:
                try:
                    number = int(number)
                except (ValueError, OverflowError):
                    raise Defer from None
            if not INT64_MIN <= number <= INT64_MAX:
                raise Defer
            read = number
        elif (value.doubleValue is not UNSET or value.bytesValue is not UNSET or value.arrayValue is not UNSET
                or value.kvlistValue is not UNSET):
            raise Defer
        else:
            continue  # an empty AnyValue: skipped
        out[key] = read
        if end_prefixes and key.startswith(end_prefixes):
            ended = True
        else:
            start[key] = read
    return out, (start if ended else out)


_HEX = re.compile(r"[0-9a-fA-F]+\Z").match


def span_id(raw: str, digits: int) -> int:
    """A hex id as the fast path reads it (1 to ``digits`` hex digits, not zero)."""
    if 0 < len(raw) <= digits and _HEX(raw):
        value = int(raw, 16)
        if value:
            return value
    raise Defer


def time_ns(raw: int | str) -> int:
    """A time as the fast path reads it (digits in text, or a non-negative JSON integer, up to 64 bits)."""
    if type(raw) is str:
        if raw.isdigit() and raw.isascii():
            value = int(raw)
            if value <= UINT64_MAX:
                return value
        raise Defer
    if type(raw) is int and 0 <= raw <= UINT64_MAX:
        return raw
    raise Defer
