"""The seed articles' reference detectors, re-implemented from their text, run over recorded traces.

Why: the detection benchmark shows spanbreaker's false-trip rate side by side with what the articles recommend,
on the same runs. Each detector follows the article's code and default thresholds as written (see
``../shared/seeds/``); only the input is adapted, from framework callbacks to recorded spans:

* smolagents article (``SmolagentsBreaker``): code-repair loop (same exception class on 4 consecutive steps),
  tool repetition storm (same tool + args hash 4 times in the session), tool storm (same tool name 3
  consecutive calls), memory inflation (step memory >= 4x the median of the first three steps; the memory size
  proxy is the step's prompt, which the articles estimate as characters / 4 too).
* Agno article (``AgnoBreaker``): the same two tool checks (4 identical, 3 consecutive), structured-output
  failure rate, session bloat and delegation depth (these three have no signal in single-agent bash runs).
* Bee article (``BeeAgentBreaker``): tool fixation (the last 4 calls to one tool with Jaccard >= 0.70 to the
  first of the window; the input is the span's ``input.value`` text), echo loop (unique (tool, input) / calls
  < 0.40 after 5 calls), token budget (total estimated input tokens > 100,000) and memory drift (two
  consecutive iteration growths >= 1.35x).

A detector reports the step of its first trip; a trace "trips" under the seeds when any of them fires.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from spanbreaker.replay.recorded import RecordedSpan, RecordedTrace
from spanbreaker.signals import Kind, as_int, classify

SEED_DETECTORS = (
    "same_tool_3_in_a_row",
    "memory_4x_baseline",
    "total_tokens_over_100k",
    "identical_tool_args_4x",
    "jaccard_fixation",
    "token_drift",
    "exploration_ratio",
    "same_exception_4_steps",
)


@dataclass
class SeedVerdict:
    first: dict[str, int] = field(default_factory=dict)
    """Detector -> 1-based index of the model turn (step) where it first fired."""

    @property
    def tripped(self) -> bool:
        return bool(self.first)

    @property
    def earliest(self) -> tuple[str, int] | None:
        if not self.first:
            return None
        name = min(self.first, key=lambda k: (self.first[k], SEED_DETECTORS.index(k)))
        return name, self.first[name]


def normalize_text(value: Any) -> str:
    """Bee article's normalizeText: JSON text, lower case, non-alphanumerics to spaces, words sorted."""
    text = json.dumps(value if value is not None else "").lower()
    return " ".join(sorted(w for w in re.sub(r"[^a-z0-9\s]", " ", text).split() if w))


def jaccard(a: str, b: str) -> float:
    set_a, set_b = set(a.split(" ")) - {""}, set(b.split(" ")) - {""}
    if not set_a and not set_b:
        return 1.0
    union = set_a | set_b
    return len(set_a & set_b) / len(union) if union else 0.0


def _args(span: RecordedSpan) -> Any:
    raw = span.attributes.get("input.value")
    try:
        data = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return raw
    if isinstance(data, dict) and "kwargs" in data:
        return data["kwargs"]
    return data


def _exception_type(span: RecordedSpan) -> str | None:
    for event in span.events:
        if event.name == "exception":
            etype = event.attributes.get("exception.type")
            if isinstance(etype, str):
                return etype.rsplit(".", 1)[-1]
    return None


class _Run:
    """The state of every seed detector over one run."""

    def __init__(self) -> None:
        self.verdict = SeedVerdict()
        self.session_counts: dict[str, int] = {}
        self.recent_names: list[str] = []
        self.history: list[tuple[str, str]] = []
        self.exceptions: list[str | None] = []
        self.baseline: list[int] = []
        self.iteration_tokens: list[int] = []
        self.total_tokens = 0

    def fire(self, name: str, step: int) -> None:
        self.verdict.first.setdefault(name, step)

    def tool_call(self, span: RecordedSpan, step: int) -> None:
        name = str(span.attributes.get("tool.name") or span.name)
        args = _args(span)
        digest = hashlib.md5(json.dumps(args, sort_keys=True, default=str).encode()).hexdigest()[:8]
        key = f"{name}:{digest}"
        self.session_counts[key] = self.session_counts.get(key, 0) + 1
        if self.session_counts[key] >= 4:
            self.fire("identical_tool_args_4x", step)
        self.recent_names = [*self.recent_names, name][-5:]
        if len(self.recent_names) >= 3 and all(n == name for n in self.recent_names[-3:]):
            self.fire("same_tool_3_in_a_row", step)
        # Bee normalises the tool input as the framework hands it over; on a span that is ``input.value``
        self.history.append((name, normalize_text(span.attributes.get("input.value", args))))
        window = self.history[-4:]
        if len(window) == 4 and all(n == window[0][0] for n, _ in window) and all(
                jaccard(window[0][1], text) >= 0.70 for _, text in window[1:]):
            self.fire("jaccard_fixation", step)
        if len(self.history) >= 5 and len(set(self.history)) / len(self.history) < 0.40:
            self.fire("exploration_ratio", step)

    def model_call(self, span: RecordedSpan, step: int) -> None:
        prompt = as_int(span.attributes.get("llm.token_count.prompt")) or 0
        # memory inflation (smolagents): median of the first three steps is the baseline
        if len(self.baseline) < 3:
            self.baseline.append(prompt)
        else:
            base = sorted(self.baseline)[len(self.baseline) // 2]
            if base and prompt / base >= 4.0:
                self.fire("memory_4x_baseline", step)
        # token budget and drift (Bee)
        self.iteration_tokens.append(prompt)
        self.total_tokens += prompt
        if self.total_tokens > 100_000:
            self.fire("total_tokens_over_100k", step)
        if len(self.iteration_tokens) >= 3:
            a, b, c = self.iteration_tokens[-3:]
            if b / max(a, 1) >= 1.35 and c / max(b, 1) >= 1.35:
                self.fire("token_drift", step)

    def step_end(self, span: RecordedSpan, step: int) -> None:
        exc = _exception_type(span) if span.status_code == 2 else None
        self.exceptions.append(exc)
        if exc is not None and len(self.exceptions) >= 4 and all(e == exc for e in self.exceptions[-4:]):
            self.fire("same_exception_4_steps", step)


def run_seeds(trace: RecordedTrace) -> SeedVerdict:
    """Every seed detector over one recorded trace, in recorded start order."""
    run = _Run()
    steps: dict[int, int] = {}
    by_id = {s.span_id: s for s in trace.spans}
    for span in sorted(trace.spans, key=lambda s: s.start_unix_nano):
        kind = classify(span.name, span.attributes)
        if kind is Kind.CHAIN:
            steps[span.span_id] = len(steps) + 1
            continue
        parent = by_id.get(span.parent_id) if span.parent_id is not None else None
        step = steps.get(parent.span_id, len(steps)) if parent is not None else len(steps)
        if kind is Kind.TOOL:
            run.tool_call(span, step)
        elif kind is Kind.LLM:
            run.model_call(span, step)
    for span in sorted(trace.spans, key=lambda s: s.end_unix_nano):
        if span.span_id in steps:
            run.step_end(span, steps[span.span_id])
    return run.verdict
