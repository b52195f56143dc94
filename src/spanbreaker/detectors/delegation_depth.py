"""delegation_depth: agents nested too deep (orchestrator -> specialist -> ... ).

An orchestrator calling a specialist is depth 2, expected. The default allows 4 levels; the fifth agent
start is vetoed, which stops the whole tree.
"""

from __future__ import annotations

from ..signals import AgentRun
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding


class DelegationDepth(Detector):
    id = "delegation_depth"

    def agent_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, run: AgentRun) -> Finding | None:
        depth, limit = len(span.chain), self.config.max_delegation_depth
        if depth > limit:
            return self.trip(f"agent {run.name} would run at delegation depth {depth}, limit {limit}",
                             depth=depth, limit=limit, chain=list(span.chain))
        return None
