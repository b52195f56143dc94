"""Human-readable replay output: a table of verdicts and a summary by detector (rich), and the summary figures
the HTML page and the JSON consumers share.

Why a summary by detector: tuning is per detector. A user raising one threshold wants to see how many traces
that detector alone would have stopped, and what those trips would have saved.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

from .readers import Problem
from .runner import TraceResult

LIST_ALL_UP_TO = 50
"""Up to this many traces every verdict is listed; beyond it only the tripped ones (unless asked for all)."""


@dataclass
class DetectorSummary:
    detector: str
    trips: int = 0
    model_calls_after: int = 0
    tool_calls_after: int = 0
    tokens_after: int = 0


@dataclass
class Summary:
    traces: int = 0
    tripped: int = 0
    spans: int = 0
    calls_after_trip: int = 0
    by_detector: dict[str, DetectorSummary] = field(default_factory=dict)

    def add(self, result: TraceResult) -> None:
        self.traces += 1
        self.spans += result.spans
        if not result.tripped or result.detector is None:
            return
        self.tripped += 1
        self.calls_after_trip += result.calls_after_trip
        item = self.by_detector.setdefault(result.detector, DetectorSummary(result.detector))
        item.trips += 1
        item.model_calls_after += result.model_calls_after
        item.tool_calls_after += result.tool_calls_after
        item.tokens_after += result.tokens_after_trip

    def as_json(self) -> dict[str, Any]:
        return {
            "traces": self.traces, "tripped": self.tripped, "spans": self.spans,
            "calls_after_trip": self.calls_after_trip,
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


def verdict_table(results: list[TraceResult], show_all: bool = False) -> Table:
    listed = results if show_all or len(results) <= LIST_ALL_UP_TO else [r for r in results if r.tripped]
    table = Table(title="Replay verdicts", show_lines=False)
    for name, justify in (("trace", "left"), ("run", "left"), ("tripped", "left"), ("detector", "left"),
                          ("step", "left"), ("span", "left"), ("model calls after", "right"),
                          ("tool calls after", "right"), ("reason", "left")):
        table.add_column(name, justify=justify, overflow="fold",  # type: ignore[arg-type]
                         no_wrap=name in ("trace", "tripped", "step"))
    for r in listed:
        table.add_row(
            r.trace_id[:16], label(r), "yes" if r.tripped else "no", r.detector or "", r.step or "",
            r.span_name or "", str(r.model_calls_after) if r.tripped else "",
            str(r.tool_calls_after) if r.tripped else "", r.reason or "",
        )
    return table


def summary_table(summary: Summary) -> Table:
    table = Table(title=f"{summary.tripped} of {summary.traces} traces would have tripped "
                        f"({summary.spans:,} spans replayed)")
    table.add_column("detector")
    table.add_column("trips", justify="right")
    table.add_column("model calls saved", justify="right")
    table.add_column("tool calls saved", justify="right")
    table.add_column("tokens saved", justify="right")
    for item in sorted(summary.by_detector.values(), key=lambda d: (-d.trips, d.detector)):
        table.add_row(item.detector, str(item.trips), str(item.model_calls_after), str(item.tool_calls_after),
                      f"{item.tokens_after:,}")
    return table


def print_report(console: Console, results: list[TraceResult], summary: Summary, problems: list[Problem],
                 show_all: bool = False) -> None:
    if results:
        console.print(verdict_table(results, show_all))
        hidden = len(results) - len(verdict_table(results, show_all).rows)
        if hidden:
            console.print(f"{hidden} traces stayed quiet (not listed; --all lists every trace)")
    console.print(summary_table(summary))
    if problems:
        console.print(f"[yellow]{len(problems)} input problem(s); the affected records were skipped or cut "
                      f"(listed on stderr)[/yellow]")
