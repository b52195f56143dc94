"""Bounded-cost fingerprints and comparison keys for tool arguments and results.

Attribute values can be 10 MB strings. Everything here reads at most ``cap`` characters of a value (head and
tail) plus its length, so the cost per span is bounded whatever the agent printed. Fingerprints are short
hex digests: they are what the breaker keeps and what it may write into evidence (never the raw text).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from hashlib import blake2b
from typing import Any

from . import jsontext
from .conventions.frameworks import ENVELOPE_KEYS

_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
"""One encoder for every call: ``json.dumps`` with options builds a new encoder each time."""
_EMPTY_RESULTS = frozenset(
    {"", "[]", "{}", "null", "none", "()", '""', "''", "no results", "no results found", "not found", "0 results",
     "nothing found", "empty"}
)
SIMILARITY_CHARS = 256
"""Length of the normalised text kept for near-duplicate comparison (rapidfuzz cost is quadratic in it)."""


def digest(text: str, cap: int) -> str:
    """A 16-hex-digit fingerprint of ``text`` reading at most ``cap`` characters of it."""
    n = len(text)
    if n > cap:
        half = cap // 2
        text = f"{text[:half]}\x00{n}\x00{text[-half:]}"
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def canonical_args(raw: Any, volatile_keys: frozenset[str], cap: int) -> str:
    """A canonical text for tool arguments, so that key order and volatile keys do not make calls differ.

    Understands the OpenInference shapes: smolagents ``{"args": [...], "kwargs": {...},
    "sanitize_inputs_outputs": ...}``, Agno's plain argument object, and GenAI ``gen_ai.tool.call.arguments``.
    Values too large to parse within ``cap`` are used as they are (the digest bounds the cost).
    """
    if raw is None:
        return ""
    text: str = raw if isinstance(raw, str) else str(raw)
    if len(text) > cap or not text or text[0] not in "{[":
        return text
    try:
        value = jsontext.loads(text)
    except (ValueError, RecursionError):
        return text
    if isinstance(value, dict):
        # smolagents' envelope key goes whatever the volatile keys are: a configured set replaces the default one,
        # and the envelope left in hid the kwargs (and their volatile keys) from the unwrapping below
        value = _drop_volatile(_drop_volatile(value, ENVELOPE_KEYS), volatile_keys)
        if set(value) <= {"args", "kwargs"}:
            args, kwargs = value.get("args") or [], value.get("kwargs") or {}
            if isinstance(kwargs, dict):
                kwargs = _drop_volatile(kwargs, volatile_keys)
            value = {"args": args, "kwargs": kwargs} if args else kwargs
    try:
        return _CANONICAL_JSON.encode(value)
    except (TypeError, ValueError, RecursionError):
        return text


def _drop_volatile(value: dict[str, Any], volatile_keys: frozenset[str]) -> dict[str, Any]:
    if volatile_keys.isdisjoint(value):
        return value
    return {k: v for k, v in value.items() if k not in volatile_keys}


_PUNCTUATION = bytes.maketrans(b'{}[]",:\'', b"        ")
"""JSON punctuation, mapped to spaces; on bytes, a table lookup per byte (a regex costs several times more)."""


def sample(text: str) -> str:
    """The part of ``text`` that :func:`similarity_text` reads (a cheap slice, kept until it is needed)."""
    if len(text) > SIMILARITY_CHARS * 4:
        return f"{text[: SIMILARITY_CHARS * 2]} {text[-SIMILARITY_CHARS * 2:]}"
    return text


def similarity_text(text: str) -> str:
    """Lower-cased, JSON punctuation and whitespace folded; head and tail, at most :data:`SIMILARITY_CHARS`.

    Head *and* tail: two test runs share a long identical header and differ in the summary line at the end.
    """
    half = SIMILARITY_CHARS // 2
    text = sample(text)
    folded = b" ".join(text.encode("utf-8", "surrogatepass").translate(_PUNCTUATION).split()).lower().decode(
        "utf-8", "replace")
    if len(folded) <= SIMILARITY_CHARS:
        return folded
    return f"{folded[:half]}~{folded[-half:]}"


def is_empty_result(text: str | None) -> bool:
    if text is None:
        return True
    if len(text) > 64:
        return False
    return text.strip().strip(".").lower() in _EMPTY_RESULTS


def first_str(values: Iterable[Any]) -> str | None:
    for value in values:
        if isinstance(value, str):
            return value
    return None
