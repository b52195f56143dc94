"""Human-readable replay output: a table of verdicts and a summary by detector (rich), and the summary figures
the HTML page and the JSON consumers share.

Why a summary by detector: tuning is per detector. A user raising one threshold wants to see how many traces
that detector alone would have stopped, and what those trips would have saved. Why the evidence and outcome
columns: a trip on a run that succeeded would have killed a success; the reader judges each trip from the calls
it counted (ids and fingerprints, as on the trip attributes) and the run's label.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from .recorded import Problem
from .runner import TraceResult

if TYPE_CHECKING:
    from .sweep import SweepRow

LIST_ALL_UP_TO = 50
"""Up to this many traces every verdict is listed; beyond it only the tripped ones (unless asked for all)."""


@dataclass
class DetectorSummary:
    detector: str
    trips: int = 0
    model_calls_after: int = 0
    tool_calls_after: int = 0
    tokens_after: int = 0
    cost_after_usd: float = 0.0


@dataclass
class Summary:
    traces: int = 0
    tripped: int = 0
    spans: int = 0
    calls_after_trip: int = 0
    tokens_after_trip: int = 0
    cost_after_trip_usd: float = 0.0
    """What the recordings spent on model calls after their trips (0 where no model has a price)."""
    cost_usd: float = 0.0
    """What every replayed run's model calls cost: whether any model had a price at all."""
    labelled: int = 0
    """Traces that carry an outcome label (:mod:`~spanbreaker.replay.outcome`)."""
    successful: int = 0
    successful_tripped: int = 0
    """Successful runs that would have tripped: each one a success the breaker would have killed."""
    unsuccessful_tripped: int = 0
    by_detector: dict[str, DetectorSummary] = field(default_factory=dict)

    steered: int = 0
    """Traces a steer would have reached first (``response="steer"``)."""

    def add(self, result: TraceResult) -> None:
        self.traces += 1
        self.spans += result.spans
        success = result.success
        if success is not None:
            self.labelled += 1
            self.successful += success
        self.steered += result.steered
        self.cost_usd += result.cost_usd
        if not result.tripped or result.detector is None:
            return
        self.tripped += 1
        self.calls_after_trip += result.calls_after_trip
        self.tokens_after_trip += result.tokens_after_trip
        cost_after = result.cost_after_trip_usd
        self.cost_after_trip_usd += cost_after
        if success is not None:
            if success:
                self.successful_tripped += 1
            else:
                self.unsuccessful_tripped += 1
        item = self.by_detector.setdefault(result.detector, DetectorSummary(result.detector))
        item.trips += 1
        item.model_calls_after += result.model_calls_after
        item.tool_calls_after += result.tool_calls_after
        item.tokens_after += result.tokens_after_trip
        item.cost_after_usd += cost_after

    def as_json(self) -> dict[str, Any]:
        return {
            "traces": self.traces, "tripped": self.tripped, "steered": self.steered, "spans": self.spans,
            "calls_after_trip": self.calls_after_trip, "tokens_after_trip": self.tokens_after_trip,
            "cost_after_trip_usd": round(self.cost_after_trip_usd, 6), "cost_usd": round(self.cost_usd, 6),
            "labelled": self.labelled, "successful": self.successful,
            "successful_tripped": self.successful_tripped, "unsuccessful_tripped": self.unsuccessful_tripped,
            "by_detector": {k: vars(v) for k, v in sorted(self.by_detector.items())},
        }


def summarize(results: Iterable[TraceResult]) -> Summary:
    summary = Summary()
    for result in results:
        summary.add(result)
    return summary


def label(result: TraceResult) -> str:
    """A short human name for a trace from its resource (service plus the first identifying attribute)."""
    resource = result.resource
    service = str(resource.get("service.name", ""))
    for key, value in resource.items():
        if key.startswith(("service.", "telemetry.", "host.", "process.", "os.", "dataset.")):
            continue
        if isinstance(value, str) and value:
            return f"{service} {value}".strip()[:60]
    return service[:60]


def listed(results: list[TraceResult], show_all: bool = False) -> list[TraceResult]:
    """The traces the verdict table lists: all of them up to :data:`LIST_ALL_UP_TO`, else the tripped ones."""
    return results if show_all or len(results) <= LIST_ALL_UP_TO else [r for r in results if r.tripped]


def verdict_table(results: list[TraceResult], show_all: bool = False) -> Table:
    rows = listed(results, show_all)
    labelled = any(r.outcome is not None for r in results)
    table = Table(title="Replay verdicts", show_lines=False)
    steering = any(r.steered for r in results)
    for name, justify in (("trace", "left"), ("run", "left"), ("outcome", "left"), ("would steer at", "left"),
                          ("tripped", "left"), ("detector", "left"), ("step", "left"), ("span", "left"),
                          ("model calls after", "right"), ("tool calls after", "right"), ("reason", "left")):
        if (name == "outcome" and not labelled) or (name == "would steer at" and not steering):
            continue
        table.add_column(name, justify=justify, overflow="fold",  # type: ignore[arg-type]
                         no_wrap=name in ("trace", "tripped", "step"))
    for r in rows:
        cells = [r.trace_id[:16], label(r), r.outcome.word if r.outcome else "", "yes" if r.tripped else "no",
                 r.detector or "", r.step or "", r.span_name or "", str(r.model_calls_after) if r.tripped else "",
                 str(r.tool_calls_after) if r.tripped else "", r.reason or ""]
        if steering:
            cells.insert(3, steer_text(r))
        if not labelled:
            del cells[2]
        table.add_row(*cells)
    return table


def steer_text(result: TraceResult) -> str:
    """Where a steer would have failed a call first: ``detector at step (span)``; empty when none would."""
    steer = result.steer
    if steer is None:
        return ""
    return f"{steer['detector']} at {steer['step'] or '?'} ({steer['span_name'] or steer['span_id']})"


def evidence_text(result: TraceResult) -> str:
    """The trip's evidence as the trip attributes carry it, ``key=value`` separated by spaces."""
    return " ".join(f"{k}={','.join(v) if isinstance(v, tuple) else v}" for k, v in result.shown_evidence.items())


def calls_text(result: TraceResult) -> str:
    """One line per counted call: step, tool, span id and the argument and result fingerprints."""
    return "\n".join(f"{c.step or '?'}  {c.tool}  span {c.span_id}  args {c.args_fingerprint}  "
                     f"result {c.result_fingerprint}" for c in result.trip_calls)


def evidence_table(results: list[TraceResult]) -> Table:
    table = Table(title="Trip evidence (fingerprints and ids only, as on the trip attributes)", show_lines=True)
    table.add_column("trace", no_wrap=True)
    table.add_column("outcome", no_wrap=True)
    table.add_column("detector", no_wrap=True)
    table.add_column("evidence", overflow="fold")
    table.add_column("calls counted", overflow="fold")
    for r in results:
        if r.tripped:
            table.add_row(r.trace_id[:16], r.outcome.word if r.outcome else "", r.detector or "", evidence_text(r),
                          calls_text(r))
    return table


def outcome_line(summary: Summary) -> str:
    """``3 of 371 successful runs tripped, 12 of 129 unsuccessful`` (empty when no trace carries a label)."""
    if not summary.labelled:
        return ""
    return (f"{summary.successful_tripped} of {summary.successful} successful runs tripped, "
            f"{summary.unsuccessful_tripped} of {summary.labelled - summary.successful} unsuccessful")


def summary_table(summary: Summary) -> Table:
    table = Table(title=f"{summary.tripped} of {summary.traces} traces would have tripped "
                        f"({summary.spans:,} spans replayed)")
    table.add_column("detector")
    table.add_column("trips", justify="right")
    table.add_column("model calls saved", justify="right")
    table.add_column("tool calls saved", justify="right")
    table.add_column("tokens saved", justify="right")
    priced = summary.cost_usd > 0
    if priced:
        table.add_column("cost saved", justify="right")
    for item in sorted(summary.by_detector.values(), key=lambda d: (-d.trips, d.detector)):
        cells = [item.detector, str(item.trips), str(item.model_calls_after), str(item.tool_calls_after),
                 f"{item.tokens_after:,}"]
        table.add_row(*cells, *([usd(item.cost_after_usd)] if priced else []))
    return table


def usd(amount: float) -> str:
    """Dollars as the reports show them: cents, or a tenth of a cent under a dollar's hundredth."""
    return f"${amount:,.2f}" if amount >= 0.01 or amount == 0 else f"${amount:.4f}"


def sweep_cells(row: SweepRow, labelled: bool) -> list[str]:
    """One sweep row as text cells (the HTML table shows the same)."""
    s = row.summary
    detectors = ", ".join(f"{d.detector} {d.trips}" for d in sorted(s.by_detector.values(),
                                                                     key=lambda d: (-d.trips, d.detector)))
    cells = [row.label + (" (base)" if row.is_base and row.label != "base" else ""), str(s.tripped),
             str(s.calls_after_trip), f"{s.tokens_after_trip:,}", usd(s.cost_after_trip_usd)]
    if labelled:
        cells += [f"{s.successful_tripped} of {s.successful}",
                  f"{s.unsuccessful_tripped} of {s.labelled - s.successful}"]
    return [*cells, detectors]


SWEEP_COLUMNS = ("configuration", "traces tripped", "calls saved", "tokens saved", "cost saved",
                 "successful runs tripped", "unsuccessful runs tripped", "trips by detector")


def sweep_table(rows: Sequence[SweepRow]) -> Table:
    traces = rows[0].summary.traces if rows else 0
    labelled = any(row.summary.labelled for row in rows)
    table = Table(title=f"Threshold sweep over {traces} traces (one value at a time from the base configuration)")
    for name in SWEEP_COLUMNS:
        if "runs tripped" in name and not labelled:
            continue
        table.add_column(name, justify="left" if name in ("configuration", "trips by detector") else "right")
    for row in rows:
        table.add_row(*sweep_cells(row, labelled))
    return table


def print_report(console: Console, results: list[TraceResult], summary: Summary, problems: list[Problem],
                 show_all: bool = False, sweep: Sequence[SweepRow] = ()) -> None:
    if results:
        rows = listed(results, show_all)
        console.print(verdict_table(results, show_all))
        hidden = len(results) - len(rows)
        if hidden:
            console.print(f"{hidden} traces stayed quiet (not listed; --all lists every trace)")
        if any(r.tripped for r in rows):
            console.print(evidence_table(rows))
    console.print(summary_table(summary))
    if summary.steered:
        console.print(f"response=steer: {summary.steered} traces would have been steered first; "
                      f"the trips above are where each would stop if the agent kept on")
    if summary.labelled:
        console.print(f"Outcome labels: {outcome_line(summary)}")
    if sweep:
        console.print(sweep_table(sweep))
    if problems:
        console.print(f"[yellow]{len(problems)} input problem(s); the affected records were skipped or cut "
                      f"(listed on stderr)[/yellow]")
