"""Reading one field of a decoded record (OTLP/JSON or Jaeger JSON) the careful way: every defect an
:class:`InputError` whose message names the field and shows a bounded preview of the value, so the reader can
report it as a :class:`~.recorded.Problem` and go on with the rest.
"""

from __future__ import annotations

import base64
import binascii
import math
import reprlib
from collections.abc import Callable
from typing import Any

from .otlp_typed import UINT64_MAX

MAX_ATTRIBUTE_CHARS = 1024 * 1024
"""Longest attribute value kept; longer ones are cut (the processor reads only head and tail anyway)."""
MALFORMED = (TypeError, ValueError, AttributeError, KeyError, OverflowError, RecursionError)
"""What a record shaped unlike anything expected may raise while decoded; caught per span, line and file."""


class InputError(Exception):
    """A defect in one record; the caller turns it into a :class:`Problem` and goes on."""


_PREVIEW = reprlib.Repr()
_PREVIEW.maxstring = _PREVIEW.maxother = _PREVIEW.maxlong = 40
_PREVIEW.maxlevel = 2


def preview(value: Any) -> str:
    """A short repr for a message: bounded in length and depth whatever the value (``str`` of a record nested a
    thousand deep recurses; of a 50 MB one, copies it)."""
    return _PREVIEW.repr(value)


def clip(key: str, value: Any, what: str, note: Callable[[str], None]) -> Any:
    """An attribute value, a string past :data:`MAX_ATTRIBUTE_CHARS` cut to its head and tail (and noted)."""
    if isinstance(value, str) and len(value) > MAX_ATTRIBUTE_CHARS:
        note(f"{what}: attribute {key!r} has {len(value):,} characters; cut to {MAX_ATTRIBUTE_CHARS:,}")
        return value[: MAX_ATTRIBUTE_CHARS // 2] + value[-MAX_ATTRIBUTE_CHARS // 2:]
    return value


def list_field(value: Any, what: str) -> list[Any]:
    """A JSON array field (absent or null is empty); anything else is a defect of the record."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{what} is not a list")
    return value


def hex_id(raw: Any, nbytes: int, what: str) -> int:
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


def uint(raw: Any, what: str, top: int = UINT64_MAX) -> int:
    """A non-negative integer up to ``top`` (JSON numbers and numbers in text, as OTLP/JSON writes 64-bit ones)."""
    if isinstance(raw, float) and not math.isfinite(raw):
        raise InputError(f"{what} {raw} is not finite")
    try:
        value = int(raw)
    except (TypeError, ValueError):  # also text past Python's int digit limit
        raise InputError(f"{what} {preview(raw)} is not an integer") from None
    if value < 0:
        raise InputError(f"{what} is negative")
    if value > top:
        raise InputError(f"{what} {preview(raw)} is out of range (above {top:,})")
    return value
