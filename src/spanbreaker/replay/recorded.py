"""The recorded trace as replay holds it: spans with integer ids and nanosecond times, grouped per trace, and the
problems met reading them.

Why a model of its own rather than the SDK's ``ReadableSpan``: replay feeds the breaker engine directly (no SDK span
per recorded span, see :mod:`.feed`), and a recorded span needs only what the engine and the verdicts read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["END_ATTRIBUTE_PREFIXES", "Problem", "ProblemSink", "RecordedEvent", "RecordedSpan", "RecordedTrace",
           "start_attributes"]


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
