"""The replay library function: recorded traces in, one verdict per trace out.

What a verdict holds is what a user tuning thresholds needs: whether and where the breaker would have tripped,
and what the recording spent after that point (the calls a trip would have saved), plus a per-step timeline
(tokens, model and tool calls) for the HTML report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import BreakerConfig
from ..signals import Kind, as_int, classify
from .feed import Feeder
from .readers import Problem, RecordedSpan, RecordedTrace, read_traces


@dataclass
class StepStat:
    """One step of a trace: the CHAIN span (or the agent itself for calls outside any step)."""

    name: str
    tokens: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    tripped: bool = False


@dataclass
class TraceResult:
    trace_id: str
    tripped: bool
    resource: dict[str, Any]
    source: str
    spans: int
    model_calls: int
    tool_calls: int
    tokens: int
    detector: str | None = None
    reason: str | None = None
    span_name: str | None = None
    span_id: str | None = None
    step: str | None = None
    step_index: int | None = None
    """0-based index into :attr:`steps` of the step the trip was detected in."""
    agent: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    model_calls_after: int = 0
    tool_calls_after: int = 0
    steps: list[StepStat] = field(default_factory=list)

    @property
    def calls_after_trip(self) -> int:
        return self.model_calls_after + self.tool_calls_after

    @property
    def tokens_after_trip(self) -> int:
        if self.step_index is None:
            return 0
        return sum(s.tokens for s in self.steps[self.step_index + 1:])

    def as_json(self) -> dict[str, Any]:
        """The ``--json`` object (one per trace)."""
        return {
            "trace_id": self.trace_id, "tripped": self.tripped, "detector": self.detector, "reason": self.reason,
            "span_name": self.span_name, "span_id": self.span_id, "step": self.step, "agent": self.agent,
            "calls_after_trip": self.calls_after_trip, "model_calls_after": self.model_calls_after,
            "tool_calls_after": self.tool_calls_after, "tokens_after_trip": self.tokens_after_trip,
            "spans": self.spans, "steps": len(self.steps), "model_calls": self.model_calls,
            "tool_calls": self.tool_calls, "tokens": self.tokens, "evidence": _jsonable(self.evidence),
            "resource": _jsonable(self.resource), "source": self.source,
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _tokens(span: RecordedSpan) -> int:
    a = span.attributes
    total = as_int(a.get("llm.token_count.total"))
    if total is not None:
        return total
    parts = [as_int(a.get(k)) for k in ("llm.token_count.prompt", "llm.token_count.completion",
                                          "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")]
    return sum(p for p in parts if p is not None)


def timeline(trace: RecordedTrace) -> tuple[list[StepStat], dict[int, int]]:
    """Steps in start order, and for every span the index of its step (its nearest CHAIN ancestor)."""
    by_id = {s.span_id: s for s in trace.spans}
    kinds = {s.span_id: classify(s.name, s.attributes) for s in trace.spans}
    ordered = sorted(trace.spans, key=lambda s: s.start_unix_nano)
    steps: list[StepStat] = []
    step_of_chain: dict[int, int] = {}
    for span in ordered:
        if kinds[span.span_id] is Kind.CHAIN:
            step_of_chain[span.span_id] = len(steps)
            steps.append(StepStat(span.name))
    where: dict[int, int] = {}
    for span in ordered:
        node: RecordedSpan | None = span
        hops = 0
        while node is not None and hops < 1000 and node.span_id not in step_of_chain:
            node = by_id.get(node.parent_id) if node.parent_id is not None else None
            hops += 1
        kind = kinds[span.span_id]
        if node is not None and node.span_id in step_of_chain:
            index = step_of_chain[node.span_id]
        elif kind not in (Kind.LLM, Kind.TOOL):
            continue
        else:  # a call outside any step: counted in a step of its own
            if not steps or steps[-1].name != "(outside steps)":
                steps.append(StepStat("(outside steps)"))
            index = len(steps) - 1
        where[span.span_id] = index
        if kind is Kind.LLM:
            steps[index].model_calls += 1
            steps[index].tokens += _tokens(span)
        elif kind is Kind.TOOL:
            steps[index].tool_calls += 1
    return steps, where


def _result(trace: RecordedTrace, feeder: Feeder) -> TraceResult:
    steps, where = timeline(trace)
    kinds = [classify(s.name, s.attributes) for s in trace.spans]
    result = TraceResult(
        trace_id=trace.trace_id_hex, tripped=False, resource=trace.resource, source=trace.source,
        spans=len(trace.spans), model_calls=sum(k is Kind.LLM for k in kinds),
        tool_calls=sum(k is Kind.TOOL for k in kinds), tokens=sum(s.tokens for s in steps), steps=steps,
    )
    record = feeder.processor.trip_record(trace.trace_id)
    if record is None:
        return result
    result.tripped = True
    result.detector, result.reason = record.detector, record.reason
    result.span_name, result.span_id, result.step = record.span_name, record.span_id, record.step
    result.agent, result.evidence = record.agent, dict(record.evidence)
    result.model_calls_after, result.tool_calls_after = record.model_calls_after, record.tool_calls_after
    if record.span_id:
        result.step_index = where.get(int(record.span_id, 16))
    if result.step_index is None and record.step:
        result.step_index = next((i for i, s in enumerate(steps) if s.name == record.step), None)
    if result.step_index is not None:
        steps[result.step_index].tripped = True
    return result


def replay(
    paths: str | Path | Iterable[str | Path],
    config: BreakerConfig | None = None,
    problems: list[Problem] | None = None,
    on_problem: Callable[[Problem], None] | None = None,
    feeder: Feeder | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[TraceResult]:
    """Replay every trace in ``paths`` (files or directories) through a processor in observe mode.

    Args:
        config: thresholds; defaults when omitted (``mode`` is forced to ``observe``).
        problems: a list that receives every input defect (file, line, message); reading goes on after each.
        on_problem: called with every defect as it is found (e.g. to print it at once).
        feeder: a prepared :class:`Feeder` (benchmarks reuse one to count spans).
        progress: called with (bytes read, total bytes) as the input is consumed.
    """
    def note(problem: Problem) -> None:
        if problems is not None:
            problems.append(problem)
        if on_problem is not None:
            on_problem(problem)

    if isinstance(paths, (str, Path)):
        paths = [paths]  # one path, not the characters of one
    own = feeder is None
    active = feeder or Feeder(config or BreakerConfig())
    try:
        for trace in read_traces(paths, note, progress):
            yield replay_trace(trace, active)
    finally:
        if own:
            active.shutdown()


def replay_trace(trace: RecordedTrace, feeder: Feeder) -> TraceResult:
    """Feed one recorded trace and read the verdict."""
    feeder.feed(trace)
    result = _result(trace, feeder)
    feeder.close_trace(trace.trace_id)
    return result
