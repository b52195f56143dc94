"""tool_streak: one tool called over and over (any arguments) with nothing but empty or error results.

The "repetition storm" with paraphrased or varied arguments: every call comes back empty or failing. A
pagination run whose pages have content, or a tool that eventually returns something, resets the streak.
Polling tools get three times the limit: a job that never finishes still ends the run.
"""

from __future__ import annotations

from ..signals import ToolCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import POLLING_ROOM, Detector, Finding


class ToolStreak(Detector):
    id = "tool_streak"
    steerable = True

    def tool_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ToolCall) -> Finding | None:
        streak = scope.tools  # what recording this call found
        if streak.unhelpful_streak < 2:
            return None  # below any warning point or limit (both at least 2): the common case
        config = self.config
        if self.no_polling_tools:  # no per-tool policy either
            limit = config.tool_streak_max
        else:
            limit = config.policy_for(call.name).streak_max or config.tool_streak_max
            if config.is_polling_tool(call.name):
                limit *= POLLING_ROOM
        count = streak.unhelpful_streak
        if count >= limit:
            return self.trip(f"{call.name} called {count} times in a row with only empty or error results",
                             tool=call.name, consecutive_calls=count, limit=limit)
        if count == max(2, limit - 2):
            return self.warn(f"{call.name}: {count} unhelpful results in a row", tool=call.name,
                             consecutive_calls=count, limit=limit)
        return None
