"""The ``--html`` page: one self-contained file (inline CSS and SVG, no script, no CDN) with the summary, the
threshold sweep when one was asked for and, per tripped trace, the run's outcome label, the trip's evidence and
the calls it counted (fingerprints and ids only, as on the trip attributes), and a timeline of tokens and calls
per step with the trip marked.

Why self-contained: the page is attached to tickets and opened offline; nothing may be fetched. Every number
on it comes from the same :class:`~spanbreaker.replay.runner.TraceResult` objects as ``--json``, and carries a
``data-field`` attribute so tests can compare the rendered page with the JSON.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from html import escape
from importlib import resources
from string import Template
from typing import TYPE_CHECKING

from .recorded import Problem
from .report import SWEEP_COLUMNS, Summary, evidence_text, label, outcome_line, steer_text, sweep_cells, usd
from .runner import TraceResult

if TYPE_CHECKING:
    from .sweep import SweepRow

WIDTH = 900
BAR_HEIGHT = 120
CALL_HEIGHT = 40
MAX_TRACES = 500
"""Tripped traces drawn in full; beyond that the page lists them in the summary only."""


def _template() -> Template:
    text = resources.files(__package__).joinpath("report.html").read_text(encoding="utf-8")
    return Template(text)


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def timeline_svg(result: TraceResult) -> str:
    """Bars of tokens per step (trip step red, later steps orange) over a strip of calls per step."""
    steps = result.steps
    n = max(len(steps), 1)
    slot = (WIDTH - 60) / n
    bar = max(slot * 0.8, 1.0)
    top_tokens = max((s.tokens for s in steps), default=0) or 1
    top_calls = max((s.model_calls + s.tool_calls for s in steps), default=0) or 1
    height = BAR_HEIGHT + CALL_HEIGHT + 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
             f'height="{height}" role="img" aria-label="tokens and calls per step">',
             f'<text x="0" y="12" font-size="11" fill="#687085">max {top_tokens:,} tokens/step</text>',
             f'<text x="0" y="{BAR_HEIGHT + CALL_HEIGHT + 34}" font-size="11" fill="#687085">'
             f'max {top_calls} calls/step &#183; {len(steps)} steps</text>']
    trip = result.step_index
    for i, step in enumerate(steps):
        x = 50 + i * slot
        colour = "#c62828" if i == trip else "#d9822b" if trip is not None and i > trip else "#4a78c2"
        h = BAR_HEIGHT * step.tokens / top_tokens
        title = (f"{_e(step.name)}: {step.tokens:,} tokens, {step.model_calls} model, "
                 f"{step.tool_calls} tool calls")
        parts.append(f'<rect x="{x:.1f}" y="{20 + BAR_HEIGHT - h:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                     f'fill="{colour}"><title>{title}</title></rect>')
        calls = step.model_calls + step.tool_calls
        ch = CALL_HEIGHT * calls / top_calls
        parts.append(f'<rect x="{x:.1f}" y="{24 + BAR_HEIGHT + CALL_HEIGHT - ch:.1f}" width="{bar:.1f}" '
                     f'height="{ch:.1f}" fill="#7a8599"><title>{title}</title></rect>')
    if trip is not None:
        x = 50 + trip * slot + bar / 2
        parts.append(f'<line x1="{x:.1f}" y1="16" x2="{x:.1f}" y2="{24 + BAR_HEIGHT + CALL_HEIGHT}" '
                     f'stroke="#c62828" stroke-width="1.5" stroke-dasharray="4 2"/>')
        anchor = "end" if trip > len(steps) / 2 else "start"
        parts.append(f'<text x="{x + (-4 if anchor == "end" else 4):.1f}" y="28" font-size="12" fill="#c62828" '
                     f'text-anchor="{anchor}">trip: {_e(result.detector)} at {_e(result.step or "")}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _steps_table(result: TraceResult) -> str:
    rows = []
    for i, step in enumerate(result.steps):
        cls = ' class="trip"' if i == result.step_index else (
            ' class="after"' if result.step_index is not None and i > result.step_index else "")
        rows.append(f"<tr{cls}><td>{_e(step.name)}</td><td class=\"num\">{step.tokens}</td>"
                    f"<td class=\"num\">{step.model_calls}</td><td class=\"num\">{step.tool_calls}</td></tr>")
    return ("<details><summary>steps</summary><table class=\"steps\"><thead><tr><th>step</th>"
            "<th class=\"num\">tokens</th><th class=\"num\">model calls</th><th class=\"num\">tool calls</th>"
            "</tr></thead><tbody>" + "".join(rows) + "</tbody></table></details>")


def _calls_table(result: TraceResult) -> str:
    if not result.trip_calls:
        return ""
    rows = "".join(f"<tr><td>{_e(c.step or '')}</td><td>{_e(c.tool)}</td><td><code>{_e(c.span_id)}</code></td>"
                   f"<td><code>{_e(c.args_fingerprint)}</code></td><td><code>{_e(c.result_fingerprint)}</code></td>"
                   "</tr>" for c in result.trip_calls)
    return ('<table class="calls" data-field-table="trip_calls"><caption>calls the trip counted</caption><thead>'
            "<tr><th>step</th><th>tool</th><th>span</th><th>arguments (fingerprint)</th>"
            "<th>result (fingerprint)</th></tr></thead><tbody>" + rows + "</tbody></table>")


def _trace_section(result: TraceResult) -> str:
    facts = [
        ("run", "label", label(result)),
        ("outcome", "outcome", result.outcome.word if result.outcome else "not labelled"),
        ("would steer at", "steer", steer_text(result) or "no steer"),
        ("detector", "detector", result.detector),
        ("reason", "reason", result.reason), ("step", "step", result.step), ("span", "span_name", result.span_name),
        ("model calls after trip", "model_calls_after", result.model_calls_after),
        ("tool calls after trip", "tool_calls_after", result.tool_calls_after),
        ("calls after trip", "calls_after_trip", result.calls_after_trip),
        ("tokens after trip", "tokens_after_trip", result.tokens_after_trip),
        ("model cost after trip", "cost_after_trip_usd", usd(result.cost_after_trip_usd)),
        ("model calls / tool calls / tokens / cost in the run", "totals",
         f"{result.model_calls} / {result.tool_calls} / {result.tokens} / {usd(result.cost_usd)}"),
        ("evidence", "evidence", evidence_text(result)),
        ("source", "source", result.source),
    ]
    dl = "".join(f'<dt>{_e(name)}</dt><dd data-field="{field}">{_e(value if value is not None else "")}</dd>'
                 for name, field, value in facts)
    return (f'<section class="trace" data-trace-id="{_e(result.trace_id)}">'
            f"<h2>Trace <code>{_e(result.trace_id)}</code></h2><dl class=\"facts\">{dl}</dl>"
            f"{_calls_table(result)}{timeline_svg(result)}{_steps_table(result)}</section>")


def sweep_html(rows: Sequence[SweepRow]) -> str:
    """The sweep table, the same cells as the text report's."""
    if not rows:
        return ""
    labelled = any(row.summary.labelled for row in rows)
    columns = [c for c in SWEEP_COLUMNS if labelled or "runs tripped" not in c]
    fields = [c.replace(" ", "_") for c in columns]
    cls = ["" if i in (0, len(columns) - 1) else ' class="num"' for i in range(len(columns))]
    head = "".join(f"<th{cls[i]}>{_e(c)}</th>" for i, c in enumerate(columns))
    body = "\n".join(
        f'<tr data-config="{_e(row.label)}">'
        + "".join(f'<td{cls[i]} data-field="{f}">{_e(cell)}</td>'
                  for i, (f, cell) in enumerate(zip(fields, sweep_cells(row, labelled), strict=True)))
        + "</tr>" for row in rows)
    return (f"<h2>Threshold sweep</h2><p class=\"muted\">Each row varies one key from the base configuration; "
            f"every trace was read once and replayed under each configuration.</p>"
            f'<table id="sweep"><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>')


def render(results: list[TraceResult], summary: Summary, problems: list[Problem], title: str,
           sweep: Sequence[SweepRow] = ()) -> str:
    priced = summary.cost_usd > 0  # no model of the replay has a price: a cost would read as a saving of $0
    detector_rows = "\n".join(
        f'<tr data-detector="{_e(d.detector)}"><td>{_e(d.detector)}</td><td class="num" data-field="trips">'
        f'{d.trips}</td><td class="num">{d.model_calls_after}</td><td class="num">{d.tool_calls_after}</td>'
        f'<td class="num">{d.tokens_after:,}</td><td class="num">{usd(d.cost_after_usd) if priced else "-"}</td></tr>'
        for d in sorted(summary.by_detector.values(), key=lambda d: (-d.trips, d.detector))
    ) or '<tr><td colspan="6" class="muted">no trips</td></tr>'
    tripped = [r for r in results if r.tripped]
    sections = "\n".join(_trace_section(r) for r in tripped[:MAX_TRACES])
    if len(tripped) > MAX_TRACES:
        sections += f'<p class="muted">{len(tripped) - MAX_TRACES} more tripped traces not drawn.</p>'
    problems_html = ""
    if problems:
        items = "".join(f"<li><code>{_e(p)}</code></li>" for p in problems[:1000])
        problems_html = f'<h2>Input problems</h2><ul id="problems">{items}</ul>'
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return _template().substitute(
        title=_e(title), generated=now, traces=summary.traces, tripped=summary.tripped, steered=summary.steered,
        spans=summary.spans,
        calls_after_trip=summary.calls_after_trip, problems=len(problems), detector_rows=detector_rows,
        cost_after_trip=usd(summary.cost_after_trip_usd) if priced else "- (no model of these traces has a price)",
        traces_html=sections, problems_html=problems_html, sweep_html=sweep_html(sweep),
        outcomes=_e(outcome_line(summary) or "no outcome labels"),
    )
