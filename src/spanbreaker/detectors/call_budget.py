"""call_budget: model calls and tool calls per trace, and tool calls inside one step.

Counted at span start, so the call past the budget is the one vetoed. The per-step limit catches a CodeAgent
whose code calls a tool in a loop: one step, hundreds of calls, which ``max_steps`` never sees.
"""

from __future__ import annotations

from ..signals import ModelCall, ToolCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding


class CallBudget(Detector):
    id = "call_budget"

    def model_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        return self._check("model", trace.usage().model_calls, self.config.max_model_calls)

    def tool_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ToolCall) -> Finding | None:
        found = self._check("tool", trace.usage().tool_calls, self.config.max_tool_calls)
        if found is not None:
            return found
        step = trace.open.get(span.parent_id) if span.parent_id is not None else None
        if step is not None and span.step is not None:
            limit = self.config.max_tool_calls_per_step
            if step.tool_calls > limit:
                return self.trip(f"{step.tool_calls} tool calls inside {span.step}, limit {limit}",
                                 tool_calls_in_step=step.tool_calls, limit=limit, tool=call.name)
        return None

    def _check(self, what: str, count: int, limit: int) -> Finding | None:
        if count > limit:
            return self.trip(f"{count} {what} calls in this trace, budget {limit}", calls=count, limit=limit,
                             call_type=what)
        if count == int(limit * self.config.budget_warn_fraction):
            return self.warn(f"{count} of {limit} {what} calls used", calls=count, limit=limit, call_type=what)
        return None
