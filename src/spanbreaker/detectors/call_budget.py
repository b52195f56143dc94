"""call_budget: model calls and tool calls per trace, and tool calls inside one step.

Counted at span start, so the call past the budget is the one vetoed. The per-step limit catches a CodeAgent
whose code calls a tool in a loop: one step, hundreds of calls, which ``max_steps`` never sees.
"""

from __future__ import annotations

from ..config import BreakerConfig
from ..signals import ModelCall, ToolCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding, Quiet


class CallBudget(Detector):
    id = "call_budget"

    def __init__(self, config: BreakerConfig) -> None:
        super().__init__(config)
        # The counts at which _check warns, computed once (the config is immutable): most calls are neither
        # over the budget nor at the warning point, and are decided by two comparisons.
        self._model_warn_at = int(config.max_model_calls * config.budget_warn_fraction)
        self._tool_warn_at = int(config.max_tool_calls * config.budget_warn_fraction)

    def model_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        count = (trace.totals if trace.remote is None else trace.usage()).model_calls
        if count > self.config.max_model_calls or count == self._model_warn_at:
            return self._check("model", count, self.config.max_model_calls)
        return None

    def tool_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ToolCall) -> Finding | None:
        count = (trace.totals if trace.remote is None else trace.usage()).tool_calls
        if count > self.config.max_tool_calls or count == self._tool_warn_at:
            found = self._check("tool", count, self.config.max_tool_calls)
            if found is not None:
                return found
        if span.step is None or span.parent_id is None:
            return None
        step = trace.open.get(span.parent_id)
        if step is not None:
            limit = self.config.max_tool_calls_per_step
            if step.tool_calls > limit:
                return self.trip(f"{step.tool_calls} tool calls inside {span.step}, limit {limit}",
                                 tool_calls_in_step=step.tool_calls, limit=limit, tool=call.name)
        return None

    def quiet_below(self, hook: str) -> Quiet | None:
        # Reports at the warning count exactly, or above the budget. tool_start also judges the step's own
        # count, so it always runs.
        if hook == "model_start":
            return Quiet(model_calls=min(self._model_warn_at, self.config.max_model_calls + 1))
        return None

    def _check(self, what: str, count: int, limit: int) -> Finding | None:
        if count > limit:
            return self.trip(f"{count} {what} calls in this trace, budget {limit}", calls=count, limit=limit,
                             call_type=what)
        if count == int(limit * self.config.budget_warn_fraction):
            return self.warn(f"{count} of {limit} {what} calls used", calls=count, limit=limit, call_type=what)
        return None
