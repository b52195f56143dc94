"""delegation_cycle: an agent re-enters its own call chain (orchestrator -> specialist -> orchestrator)."""

from __future__ import annotations

from ..signals import AgentRun
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding


class DelegationCycle(Detector):
    id = "delegation_cycle"

    def agent_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, run: AgentRun) -> Finding | None:
        reentries = span.chain[:-1].count(run.name)
        limit = self.config.delegation_revisits
        if reentries >= limit:
            return self.trip(f"agent {run.name} re-entered its own delegation chain ({' -> '.join(span.chain)})",
                             agent=run.name, reentries=reentries, limit=limit, chain=list(span.chain))
        return None
