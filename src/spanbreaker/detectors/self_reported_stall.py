"""self_reported_stall: the orchestrating model says, round after round, that it is looping or not progressing.

An orchestrator that keeps a progress ledger (Magentic-One) judges its own run each round; when it answers
``is_in_loop: true`` or ``is_progress_being_made: false`` several rounds in a row, the run is stuck by its own
account, although every call it makes differs (it re-words the same request each time, so no repetition
detector sees it). A ledger saying the run moves on resets the count: one bad round, or two, is the
orchestrator noticing and changing course. Only the two answers are read (:mod:`spanbreaker.conventions.ledger`).
"""

from __future__ import annotations

from ..signals import ModelCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding


class SelfReportedStall(Detector):
    id = "self_reported_stall"

    def model_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        stalled = call.stalled
        if stalled is None:
            return None  # no ledger in this output: the common case
        if not stalled:
            scope.slots.pop(self.id, None)
            return None
        count = scope.slots.get(self.id, 0) + 1
        scope.slots[self.id] = count
        limit = self.config.stall_flag_max
        if count >= limit:
            return self.trip(f"the model's own progress ledger said it was looping or not progressing "
                             f"{count} rounds in a row", consecutive_rounds=count, limit=limit)
        if count == limit - 1:
            return self.warn(f"the model's progress ledger flagged a stall {count} rounds in a row",
                             consecutive_rounds=count, limit=limit)
        return None
