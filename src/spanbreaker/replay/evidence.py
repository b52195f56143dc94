"""Which recorded calls a trip counted, so a reader of the replay report can judge the trip.

The trip record says "bash called 5 times with identical arguments and identical results"; the report lists
those five calls (step, span id). Like the trip attributes (``spanbreaker.evidence.*``), the list holds ids,
names and fingerprints only, never the arguments or results themselves: the report is attached to tickets.

Why it is rebuilt here from the recorded spans rather than kept by the processor: the processor's per-trace
history is windowed and hashed per process, and the replay has the whole recording at hand anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..config import BreakerConfig
from ..conventions.read import args_fingerprint, tool_name
from ..fingerprint import digest
from ..signals import Kind, as_str, classify
from .recorded import RecordedSpan, RecordedTrace

COUNT_KEYS = ("identical_calls", "consecutive_calls", "near_duplicate_calls", "calls_without_novelty")
"""Evidence fields that count tool calls; the report lists that many calls, the last ones up to the trip."""
MAX_CALLS = 50
"""Longest list kept (a streak limit may be raised to hundreds)."""


@dataclass(frozen=True)
class CallRef:
    """One counted call: where it ran and fingerprints of what it was asked and returned."""

    step: str | None
    span_id: str
    tool: str
    args_fingerprint: str
    result_fingerprint: str

    def as_json(self) -> dict[str, Any]:
        return {"step": self.step, "span_id": self.span_id, "tool": self.tool,
                "args_fingerprint": self.args_fingerprint, "result_fingerprint": self.result_fingerprint}


def _result_text(span: RecordedSpan) -> str:
    a = span.attributes
    raw = a.get("output.value")
    if raw is None:
        raw = a.get("gen_ai.tool.call.result")
    return as_str(raw) or ""


def trip_calls(trace: RecordedTrace, evidence: Mapping[str, Any], trip_span_id: str | None, trip_time_unix_nano: int,
               config: BreakerConfig, step_names: Mapping[int, str]) -> list[CallRef]:
    """The calls the trip's evidence counts: the last N calls (of the evidence's tool, and for ``tool_repeat``
    with its argument fingerprint) up to and including the trip span. Empty for trips that count no calls."""
    count = next((v for k in COUNT_KEYS if isinstance(v := evidence.get(k), int) and not isinstance(v, bool)), 0)
    if count <= 0:
        return []
    tool = evidence.get("tool") if isinstance(evidence.get("tool"), str) else None
    wanted_args = evidence.get("args_fingerprint") if isinstance(evidence.get("args_fingerprint"), str) else None
    cap, volatile = config.max_attribute_chars, config.volatile_arg_keys
    trip_span = next((s for s in trace.spans if f"{s.span_id:016x}" == trip_span_id), None) if trip_span_id else None
    cutoff = trip_span.start_unix_nano if trip_span is not None else trip_time_unix_nano
    picked: list[CallRef] = []
    for span in sorted(trace.spans, key=lambda s: s.start_unix_nano):
        if cutoff and span.start_unix_nano > cutoff:
            break
        if classify(span.name, span.attributes) is not Kind.TOOL:
            continue
        name = tool_name(span.name, span.attributes)
        if tool is not None and name != tool:
            continue
        args = args_fingerprint(name, span.attributes, volatile, cap)
        if wanted_args is not None and args != wanted_args:
            continue
        picked.append(CallRef(step_names.get(span.span_id), f"{span.span_id:016x}", name, args,
                              digest(_result_text(span), cap)))
    return picked[-min(count, MAX_CALLS):]
