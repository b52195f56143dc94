"""delegation_repeat: the caller hands the same task to the same agent and gets the same answer back.

Team back-delegation (leader -> member -> leader re-delegating the same task). Progress-aware like
``tool_repeat``: a member whose answer changed, or anything new the caller did in between, resets the count.
Also covers delegation *tools* (Agno's ``delegate_task_to_member``), reported under this id.
"""

from __future__ import annotations

from ..signals import AgentRun, delegation_key
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding

DELEGATION_TOOLS = frozenset({"delegate_task_to_member", "delegate_task_to_members", "transfer_task_to_member"})


class DelegationRepeat(Detector):
    id = "delegation_repeat"

    def agent_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, run: AgentRun) -> Finding | None:
        if len(span.chain) < 2:
            return None
        caller = trace.scope(span.chain[-2])
        repeats = caller.delegations.repeats_without_progress(_key(run))
        limit = self.config.delegation_repeat_max
        if repeats >= limit:
            return self.trip(
                f"{span.chain[-2]} delegated the same task to {run.name} {repeats + 1} times "
                f"and got the same answer",
                caller=span.chain[-2], callee=run.name, identical_delegations=repeats + 1, limit=limit,
            )
        return None


def _key(run: AgentRun) -> int:
    return delegation_key(run.name, run.task_key)
