"""tool_repeat: the identical call, returning the identical result, with nothing changed in between.

Decided in ``tool_start``: the arguments are already on the span, so the next identical call is vetoed
before it runs. Re-running tests after an edit does not count (the edit changed the world); neither does
pagination (each page is a different call) nor a call whose result changed. Repeats are counted once per
model turn (see :mod:`spanbreaker.progress`): a batch of identical calls in one turn, or a tool retried by
its own wrapper, is one decision; the model asking again after seeing the same answer is the loop. Polling
tools on the allowlist are exempt (``tool_streak`` still bounds them).
"""

from __future__ import annotations

from ..conventions.read import args_fingerprint
from ..signals import ToolCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding


class ToolRepeat(Detector):
    id = "tool_repeat"
    steerable = True

    def tool_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ToolCall) -> Finding | None:
        config = self.config
        if not self.no_polling_tools and config.is_polling_tool(call.name):
            return None
        limit = (None if self.no_polling_tools else config.policy_for(call.name).repeat_max) or config.tool_repeat_max
        repeats = scope.tools.repeats_without_progress(call.key)
        if repeats >= limit:
            return self.trip(
                f"{call.name} called {repeats + 1} times with identical arguments and identical results, "
                f"nothing changed in between",
                tool=call.name, identical_calls=repeats + 1, limit=limit,
                args_fingerprint=args_fingerprint(call.name, span.attributes, config.volatile_arg_keys,
                                                  config.max_attribute_chars),
            )
        if limit > 1 and repeats == limit - 1:
            return self.warn(f"{call.name} repeated {repeats} times without progress", tool=call.name,
                             identical_calls=repeats + 1, limit=limit)
        return None
