"""input_fixation: paraphrases of one query that keep returning near-identical results.

The agent rewords the search ("python otel span", "otel span python", "python opentelemetry span") and
gets the same answer each time. Counted only within a stretch where no call brought a new query or new
information, so faceted search with differing results never accumulates.
"""

from __future__ import annotations

from ..signals import ToolCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding


class InputFixation(Detector):
    id = "input_fixation"
    steerable = True

    def tool_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ToolCall) -> Finding | None:
        observation = scope.tools  # what recording this call found
        if observation.paraphrases == 0:
            return None  # one query is no fixation: the common case
        if not self.no_polling_tools and self.config.is_polling_tool(call.name):
            return None
        count = observation.paraphrases + 1
        limit = self.config.fixation_max
        if count >= limit:
            return self.trip(
                f"{call.name} asked {count} near-identical queries and got near-identical results",
                tool=call.name, near_duplicate_calls=count, limit=limit,
                similarity_threshold=self.config.fixation_similarity,
            )
        if count == limit - 1 and count > 1:
            return self.warn(f"{call.name}: {count} near-identical queries", tool=call.name,
                             near_duplicate_calls=count, limit=limit)
        return None
