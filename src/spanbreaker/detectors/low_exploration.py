"""low_exploration: many tool calls in a row that bring neither a new query nor a new result.

The echo loop: search -> summarise -> search over the same facts. Each call resembles an earlier one of the
same tool in both arguments and result. One genuinely new call (a new file edited, a new source reached)
resets the count, so long healthy runs never accumulate. Calls answering that the work they look at is still under
way (:func:`~spanbreaker.conventions.tool_text.waiting`) are polling: three times the window.
"""

from __future__ import annotations

from ..signals import ToolCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import POLLING_ROOM, Detector, Finding


class LowExploration(Detector):
    id = "low_exploration"
    steerable = True

    def tool_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ToolCall) -> Finding | None:
        observation = scope.tools  # what recording this call found
        if observation.stale_run < 2:
            return None  # below any warning point or window (both at least 2): the common case
        if not self.no_polling_tools and self.config.is_polling_tool(call.name):
            return None
        window = self.config.exploration_window
        if observation.stale_run >= max(2, window - 2) and observation.polling():
            window *= POLLING_ROOM
        if observation.stale_run >= window:
            return self.trip(f"{observation.stale_run} tool calls in a row brought no new query and no new result",
                             calls_without_novelty=observation.stale_run, window=window, last_tool=call.name)
        if observation.stale_run == max(2, window - 2):
            return self.warn(f"{observation.stale_run} tool calls without new information",
                             calls_without_novelty=observation.stale_run, window=window)
        return None
