"""cost_budget: US dollars per trace, from ``llm.cost.total`` when the instrumentor reports it, otherwise
from token counts and the model's price in the maintained ``genai-prices`` table."""

from __future__ import annotations

from ..config import BreakerConfig
from ..signals import ModelCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding, Quiet


class CostBudget(Detector):
    id = "cost_budget"

    def model_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        if (trace.totals if trace.remote is None else trace.usage()).cost_usd >= self.config.max_cost_usd:
            return self._trip(trace)
        return None

    def __init__(self, config: BreakerConfig) -> None:
        super().__init__(config)
        self._warn_at = config.max_cost_usd * config.budget_warn_fraction
        """Computed once: the config is immutable."""

    def model_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        spent, limit = (trace.totals if trace.remote is None else trace.usage()).cost_usd, self.config.max_cost_usd
        if spent >= limit:
            return self._trip(trace)
        if spent >= self._warn_at:
            return self.warn(f"${spent:.4f} of ${limit:.2f} spent", cost_usd=round(spent, 6), limit_usd=limit)
        return None

    def quiet_below(self, hook: str) -> Quiet | None:
        if hook == "model_start":
            return Quiet(cost_usd=self.config.max_cost_usd)
        if hook == "model_end":
            return Quiet(cost_usd=min(self._warn_at, self.config.max_cost_usd))
        return None

    def _trip(self, trace: TraceState) -> Finding:
        spent, limit = trace.usage().cost_usd, self.config.max_cost_usd
        return self.trip(f"trace spent ${spent:.4f}, budget ${limit:.2f}", cost_usd=round(spent, 6),
                         limit_usd=limit, model_calls=trace.usage().model_calls)
