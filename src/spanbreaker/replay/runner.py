"""The replay library function: recorded traces in, one verdict per trace out.

What a verdict holds is what a user tuning thresholds needs: whether and where the breaker would have tripped,
and what the recording spent after that point (the calls a trip would have saved), plus a per-step timeline
(tokens, model and tool calls) for the HTML report, the calls the trip counted and the run's outcome label, so
a reader can judge the trip.

Several configurations are replayed in one pass (:func:`replay_many`, the threshold sweep): each trace is read
and parsed once and fed to one :class:`Feeder` per configuration (an engine each: a trip's marks change what the
engine reads at a marked span's end, so configurations never share spans' marks).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import BreakerConfig
from ..conventions.read import fill_model_result
from ..marking import flatten_evidence
from ..pricing import call_cost
from ..signals import Kind, ModelCall, classify
from .evidence import CallRef, trip_calls
from .feed import Feeder
from .outcome import Outcome, outcome
from .parallel import replay_parallel
from .readers import expand_paths, file_size, read_traces
from .recorded import Problem, RecordedSpan, RecordedTrace
from .shard import Shard

USAGE_CHARS = 4096
"""How much of a model call's prompt its usage reading may scan (the history-marker count, which the figures here do
not use, reads no further)."""


@dataclass
class StepStat:
    """One step of a trace: the CHAIN span (or the agent itself for calls outside any step)."""

    name: str
    tokens: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    tripped: bool = False
    cost_usd: float = 0.0
    """What the step's model calls cost, as ``cost_budget`` counts it (:func:`~spanbreaker.pricing.call_cost`)."""


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
    outcome: Outcome | None = None
    """The run's outcome label from its resource (``eval.success``, ``swebench.resolved``), if it carries one."""
    trip_calls: list[CallRef] = field(default_factory=list)
    """The recorded calls the trip's evidence counts (ids and fingerprints only)."""
    steer: dict[str, Any] | None = None
    """``response="steer"``: where the first steer would have failed a call (``detector``, ``reason``, ``step``,
    ``span_name``, ``span_id``); the trip fields above are then where the run would have stopped after it."""
    order: tuple[int, ...] = ()
    """Where the reader handed the trace on (:attr:`RecordedTrace.order`): ``--jobs`` merges by it."""

    @property
    def steered(self) -> bool:
        return self.steer is not None

    @property
    def success(self) -> bool | None:
        return self.outcome.success if self.outcome is not None else None

    @property
    def shown_evidence(self) -> dict[str, Any]:
        """The evidence as the trip attributes carry it (``spanbreaker.evidence.*``, without the prefix)."""
        return flatten_evidence(self.evidence, prefix="")

    @property
    def calls_after_trip(self) -> int:
        return self.model_calls_after + self.tool_calls_after

    @property
    def tokens_after_trip(self) -> int:
        if self.step_index is None:
            return 0
        return sum(s.tokens for s in self.steps[self.step_index + 1:])

    @property
    def cost_usd(self) -> float:
        """What the recorded run's model calls cost (0 where no model has a price)."""
        return sum(s.cost_usd for s in self.steps)

    @property
    def cost_after_trip_usd(self) -> float:
        """What the recording spent on model calls after the trip's step: what the trip would have saved."""
        if self.step_index is None:
            return 0.0
        return sum(s.cost_usd for s in self.steps[self.step_index + 1:])

    def as_json(self) -> dict[str, Any]:
        """The ``--json`` object (one per trace)."""
        return {
            "trace_id": self.trace_id, "tripped": self.tripped, "detector": self.detector, "reason": self.reason,
            "span_name": self.span_name, "span_id": self.span_id, "step": self.step, "agent": self.agent,
            "calls_after_trip": self.calls_after_trip, "model_calls_after": self.model_calls_after,
            "tool_calls_after": self.tool_calls_after, "tokens_after_trip": self.tokens_after_trip,
            "cost_after_trip_usd": round(self.cost_after_trip_usd, 6),
            "spans": self.spans, "steps": len(self.steps), "model_calls": self.model_calls,
            "tool_calls": self.tool_calls, "tokens": self.tokens, "cost_usd": round(self.cost_usd, 6),
            "evidence": _jsonable(self.shown_evidence),
            "trip_calls": [c.as_json() for c in self.trip_calls], "steer": self.steer,
            "outcome": self.outcome.word if self.outcome else None, "success": self.success,
            "outcome_key": self.outcome.key if self.outcome else None,
            "resource": _jsonable(self.resource), "source": self.source,
        }

    def verdict_json(self) -> dict[str, Any]:
        """The verdict alone (what a threshold sweep reports per configuration and trace)."""
        return {"tripped": self.tripped, "detector": self.detector, "reason": self.reason, "step": self.step,
                "span_id": self.span_id, "calls_after_trip": self.calls_after_trip,
                "model_calls_after": self.model_calls_after, "tool_calls_after": self.tool_calls_after,
                "tokens_after_trip": self.tokens_after_trip,
                "cost_after_trip_usd": round(self.cost_after_trip_usd, 6), "steer": self.steer}


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _usage(span: RecordedSpan) -> tuple[int, float]:
    """A model call's tokens and cost, read as the breaker reads them for its budgets (every convention's names)."""
    call = ModelCall(None)
    fill_model_result(call, span.attributes, USAGE_CHARS)
    return call.tokens, call_cost(call)


def timeline(trace: RecordedTrace, kinds: dict[int, Kind] | None = None,
             usage: dict[int, tuple[int, float]] | None = None) -> tuple[list[StepStat], dict[int, int]]:
    """Steps in start order, and for every span the index of its step (its nearest CHAIN ancestor). ``kinds``:
    each span's kind by span id, when the caller has them; ``usage``: model calls' (tokens, USD) by span id as
    the engine counted them (:attr:`Feeder.usage`), the others read here."""
    by_id = {s.span_id: s for s in trace.spans}
    if usage is not None and len(by_id) != len(trace.spans):
        usage = None  # two spans under one id: which one the engine counted is not known here
    if kinds is None:
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
            step = steps[index]
            step.model_calls += 1
            counted = usage.get(span.span_id) if usage else None
            tokens, cost = counted if counted is not None else _usage(span)
            step.tokens += tokens
            step.cost_usd += cost
        elif kind is Kind.TOOL:
            steps[index].tool_calls += 1
    return steps, where


@dataclass
class _Recorded:
    """What a verdict needs from the recording, computed once per trace whatever the number of configurations."""

    steps: list[StepStat]
    where: dict[int, int]
    model_calls: int
    tool_calls: int
    outcome: Outcome | None

    @classmethod
    def of(cls, trace: RecordedTrace, usage: dict[int, tuple[int, float]] | None = None) -> _Recorded:
        kinds = [classify(s.name, s.attributes) for s in trace.spans]
        steps, where = timeline(trace, {s.span_id: k for s, k in zip(trace.spans, kinds, strict=True)}, usage)
        return cls(steps, where, kinds.count(Kind.LLM), kinds.count(Kind.TOOL), outcome(trace.resource))

    def copy(self) -> _Recorded:
        """The same figures with steps of its own, no trip marked on them (for another configuration's verdict)."""
        return dataclasses.replace(self, steps=[dataclasses.replace(s, tripped=False) for s in self.steps])


def _result(trace: RecordedTrace, feeder: Feeder, recorded: _Recorded, evidence: bool = True) -> TraceResult:
    """The verdict of ``feeder``'s processor. ``recorded.steps`` become the result's own (copy it for a second
    result); ``evidence=False`` skips listing the counted calls (sweep configurations report figures only)."""
    steps, where = recorded.steps, recorded.where
    result = TraceResult(
        trace_id=trace.trace_id_hex, tripped=False, resource=trace.resource, source=trace.source,
        spans=len(trace.spans), model_calls=recorded.model_calls, tool_calls=recorded.tool_calls,
        tokens=sum(s.tokens for s in steps), steps=steps, outcome=recorded.outcome, order=trace.order,
    )
    steer = feeder.engine.steer_record(trace.trace_id)
    if steer is not None:
        result.steer = {"detector": steer.detector, "reason": steer.reason, "step": steer.step,
                        "span_name": steer.span_name, "span_id": steer.span_id}
    record = feeder.engine.first_trip_record(trace.trace_id)  # where an enforced run stops
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
    if evidence:
        names = {span_id: steps[index].name for span_id, index in where.items()}
        result.trip_calls = trip_calls(trace, record.evidence, record.span_id, record.time_unix_nano,
                                       feeder.config, names)
    return result


def replay(
    paths: str | Path | Iterable[str | Path],
    config: BreakerConfig | None = None,
    problems: list[Problem] | None = None,
    on_problem: Callable[[Problem], None] | None = None,
    feeder: Feeder | None = None,
    progress: Callable[[int, int], None] | None = None,
    jobs: int = 1,
    shard: Shard | None = None,
) -> Iterator[TraceResult]:
    """Replay every trace in ``paths`` (files or directories) through a processor in observe mode.

    Args:
        config: thresholds; defaults when omitted (``mode`` is forced to ``observe``).
        problems: a list that receives every input defect (file, line, message); reading goes on after each.
        on_problem: called with every defect as it is found (e.g. to print it at once).
        feeder: a prepared :class:`Feeder` (benchmarks reuse one to count spans).
        progress: called with (bytes read, total bytes) as the input is consumed.
        jobs: worker processes (:mod:`spanbreaker.replay.parallel`); verdicts come in input order either way.
        shard: only the traces of this shard (``--shard K/N``).
    """
    own = feeder is None
    active = feeder or Feeder(config or BreakerConfig())
    try:
        for results in replay_many(paths, [active], problems=problems, on_problem=on_problem, progress=progress,
                                   jobs=jobs, shard=shard):
            yield results[0]
    finally:
        if own:
            active.shutdown()


def replay_many(
    paths: str | Path | Iterable[str | Path],
    feeders: Sequence[Feeder],
    problems: list[Problem] | None = None,
    on_problem: Callable[[Problem], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    jobs: int = 1,
    shard: Shard | None = None,
    only_files: frozenset[int] | None = None,
) -> Iterator[list[TraceResult]]:
    """Read every trace once and replay it through each feeder (one per configuration): per trace, one verdict
    per feeder, in the feeders' order. The first feeder's verdicts list the calls each trip counted; the others
    carry figures only (a sweep reports them as totals). The caller owns the feeders (and shuts them down).

    ``jobs`` > 1: the traces are replayed by that many worker processes, each with feeders of the same
    configurations, and merged back in input order; the first feeder then gets the spans it would have kept
    (:meth:`Feeder.take_spans`) and the feeders' span and trace counts, not the workers' engine state.
    ``only_files``: see :func:`~spanbreaker.replay.readers.read_traces` (a worker's share of the files)."""
    def note(problem: Problem) -> None:
        if problems is not None:
            problems.append(problem)
        if on_problem is not None:
            on_problem(problem)

    if isinstance(paths, (str, Path)):
        paths = [paths]  # one path, not the characters of one
    if jobs > 1:
        paths = list(paths)
        total = sum(file_size(p) for p in expand_paths(paths, lambda problem: None))
        first = feeders[0]
        for _, results, kept in replay_parallel(paths, [f.config for f in feeders], jobs, shard, first.keep_spans,
                                                note, progress, total):
            first.keep(kept)
            for feeder, result in zip(feeders, results, strict=True):
                feeder.stats.spans += result.spans
                feeder.stats.traces += 1
            yield results
        return
    for trace in read_traces(paths, note, progress, shard, only_files):
        verdict, recorded = _replay_one(trace, feeders[0], None)
        results = [verdict]
        for feeder in feeders[1:]:
            results.append(_replay_one(trace, feeder, recorded.copy(), evidence=False)[0])
        yield results


def replay_trace(trace: RecordedTrace, feeder: Feeder) -> TraceResult:
    """Feed one recorded trace and read the verdict."""
    return _replay_one(trace, feeder, None)[0]


def _replay_one(trace: RecordedTrace, feeder: Feeder, recorded: _Recorded | None,
                evidence: bool = True) -> tuple[TraceResult, _Recorded]:
    """Feed ``trace`` and read the verdict. ``recorded``: the recording's figures, when another configuration's
    replay of the same trace computed them; else computed here, after feeding (with the engine's model usage)."""
    feeder.feed(trace)
    if recorded is None:
        recorded = _Recorded.of(trace, feeder.usage)
    result = _result(trace, feeder, recorded, evidence)
    feeder.close_trace(trace.trace_id)
    return result, recorded
