"""The detector interface: small objects with optional hooks, one module per detector id.

A hook returns ``None``, or a :class:`Finding` that is either a warning (graduated response) or a trip. Hooks
run with the trace lock held, on the thread that started or ended the span: they must be O(1) in the run's
length and must not block. Start hooks see what the inputs already show and can veto the call before it
runs; end hooks account for results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..config import BreakerConfig
from ..signals import AgentRun, ModelCall, StepEnd, ToolCall
from ..tracestate import AgentScope, OpenSpan, TraceState


@dataclass(slots=True)
class Finding:
    detector: str
    reason: str
    evidence: dict[str, Any] = field(default_factory=dict)
    warning: bool = False


class Detector:
    """Base class: every hook is a no-op. Subclasses override the hooks they need."""

    id: ClassVar[str] = ""
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
        return Finding(self.id, reason, evidence, warning=True)

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

    @classmethod
    def overrides(cls, hook: str) -> bool:
        return getattr(cls, hook) is not getattr(Detector, hook)
