"""token_budget: tokens per trace, summed over every agent in it (leader and members, nested runs)."""

from __future__ import annotations

from ..config import BreakerConfig
from ..signals import ModelCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding, Quiet


class TokenBudget(Detector):
    id = "token_budget"

    def model_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        if (trace.totals if trace.remote is None else trace.usage()).tokens >= self.config.max_tokens:
            return self._trip(trace)
        return None

    def __init__(self, config: BreakerConfig) -> None:
        super().__init__(config)
        self._warn_at = config.max_tokens * config.budget_warn_fraction
        """Computed once: the config is immutable."""

    def model_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        used, limit = (trace.totals if trace.remote is None else trace.usage()).tokens, self.config.max_tokens
        if used >= limit:
            return self._trip(trace)
        if used >= self._warn_at:
            return self.warn(f"{used} of {limit} tokens used", tokens=used, limit=limit)
        return None

    def quiet_below(self, hook: str) -> Quiet | None:
        if hook == "model_start":
            return Quiet(tokens=self.config.max_tokens)
        if hook == "model_end":
            return Quiet(tokens=min(self._warn_at, self.config.max_tokens))
        return None

    def _trip(self, trace: TraceState) -> Finding:
        used, limit = trace.usage().tokens, self.config.max_tokens
        return self.trip(f"trace used {used} tokens, budget {limit}", tokens=used, limit=limit,
                         model_calls=trace.usage().model_calls)
