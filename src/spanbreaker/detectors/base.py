"""The detector interface: small objects with optional hooks, one module per detector id.

A hook returns ``None``, or a :class:`Finding` whose action is a warning (graduated response) or a trip. Hooks
run with the trace lock held, on the thread that started or ended the span: they must be O(1) in the run's
length and must not block. Start hooks see what the inputs already show and can veto the call before it
runs; end hooks account for results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..config import BreakerConfig
from ..signals import AgentRun, ModelCall, StepEnd, ToolCall
from ..tracestate import AgentScope, OpenSpan, Totals, TraceState
from ..verdict import Action

POLLING_ROOM = 3
"""A poll (a tool on the allowlist, or a call waiting on work under way) gets this many times a repetition
detector's limit: a wait takes longer than a loop needs to show, and a wait that never ends is still stopped."""


@dataclass(frozen=True, slots=True)
class Quiet:
    """Trace totals below which a hook never reports: while every total is below, the processor skips the hook
    (four comparisons instead of a call per span). ``inf`` where the hook does not look at that total."""

    tokens: float = math.inf
    model_calls: float = math.inf
    tool_calls: float = math.inf
    cost_usd: float = math.inf

    def reached(self, totals: Totals) -> bool:
        """True once any of the trace's totals got to its threshold (the hook may report)."""
        return (totals.tokens >= self.tokens or totals.model_calls >= self.model_calls
                or totals.tool_calls >= self.tool_calls or totals.cost_usd >= self.cost_usd)

    def combine(self, other: Quiet) -> Quiet:
        """Quiet below both: the lower threshold of each total."""
        return Quiet(min(self.tokens, other.tokens), min(self.model_calls, other.model_calls),
                     min(self.tool_calls, other.tool_calls), min(self.cost_usd, other.cost_usd))


@dataclass(slots=True)
class Finding:
    detector: str
    reason: str
    evidence: dict[str, Any] = field(default_factory=dict)
    action: Action = Action.TRIP
    """The response the detector asks for: ``TRIP`` (:meth:`Detector.trip`) or ``WARN`` (:meth:`Detector.warn`).
    The engine turns it into a :class:`~spanbreaker.verdict.Verdict`."""

    @property
    def warning(self) -> bool:
        return self.action is Action.WARN


class Detector:
    """Base class: every hook is a no-op. Subclasses override the hooks they need."""

    id: ClassVar[str] = ""
    steerable: ClassVar[bool] = False
    """Under ``response="steer"`` this detector's first trip on a tool call in an agent steers instead: the call
    is failed with a message to the model, and its next finding there trips. True for loop detectors, whose
    finding a different next call can answer; budgets and context vetoes stop hard."""
    HOOKS: ClassVar[tuple[str, ...]] = (
        "tool_start", "tool_end", "model_start", "model_end", "step_end", "agent_start", "agent_end",
    )

    def __init__(self, config: BreakerConfig) -> None:
        self.config = config
        self.no_polling_tools = not config.allowlist and not config.tools
        """No tool is a polling tool under this config (it is immutable): hooks test this before
        ``config.is_polling_tool``, and skip the per-call lookup."""

    def trip(self, reason: str, **evidence: Any) -> Finding:
        return Finding(self.id, reason, evidence)

    def warn(self, reason: str, **evidence: Any) -> Finding:
        return Finding(self.id, reason, evidence, Action.WARN)

    def tool_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ToolCall) -> Finding | None:
        return None

    def tool_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ToolCall) -> Finding | None:
        return None

    def model_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        return None

    def model_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        return None

    def step_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, step: StepEnd) -> Finding | None:
        return None

    def agent_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, run: AgentRun) -> Finding | None:
        return None

    def agent_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, run: AgentRun) -> Finding | None:
        return None

    def quiet_below(self, hook: str) -> Quiet | None:
        """Totals below which ``hook`` cannot report, or None when it must run on every span (the default).

        Budget detectors judge nothing but the trace's totals, so they say here where their thresholds are.
        """
        return None

    @classmethod
    def overrides(cls, hook: str) -> bool:
        return getattr(cls, hook) is not getattr(Detector, hook)
