"""tool_repeat: the identical call, returning the identical result, with nothing changed in between.

Decided in ``tool_start`` when the arguments are already on the span, so the identical call is vetoed before
it runs; when they arrive only with the span's end (the OpenAI Agents instrumentor), in ``tool_end``: the
repeated call has run, and the next call in the trace is vetoed. A call whose arguments or result were never
recorded is unknown and never counts. Re-running tests after an edit does not count (the edit changed the
world); neither does pagination (each page is a different call) nor a call whose result changed. Repeats are
counted once per model turn (see :mod:`spanbreaker.progress`): a batch of identical calls in one turn, or a tool
retried by its own wrapper, is one decision; the model asking again after seeing the same answer is the loop. Polling
tools on the allowlist are exempt (``tool_streak`` still bounds them). A call whose answer says the work it looks at
is still under way (OpenHands' "no new output after 30 seconds", a job's ``"status": "running"``:
:func:`~spanbreaker.conventions.tool_text.waiting`) is polling with any tool, and so are the calls repeated while it
waits (the build log read again): three times the limit (:meth:`~spanbreaker.progress.ToolHistory.polling`).
"""

from __future__ import annotations

from ..conventions.read import args_fingerprint
from ..signals import ToolCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import POLLING_ROOM, Detector, Finding


class ToolRepeat(Detector):
    id = "tool_repeat"
    steerable = True

    def tool_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ToolCall) -> Finding | None:
        if not call.args_known:
            return None  # arguments not on the span yet: decided when it ends (tool_end)
        return self._check(scope, span, call, scope.tools.repeats_without_progress(call.key))

    def tool_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ToolCall) -> Finding | None:
        """A call whose arguments arrived only with its end: it already ran and is recorded (its streak includes
        it), so the breaker opens now and the next call in the trace is the one vetoed."""
        if not call.keyed_at_end or not call.result_known:
            return None
        return self._check(scope, span, call, scope.tools.streak(call.key) - 1)

    def _check(self, scope: AgentScope, span: OpenSpan, call: ToolCall, repeats: int) -> Finding | None:
        """``repeats``: identical calls with identical results before this one, nothing changed in between, in
        this process; with shared state, the trace's count over every process when that is higher
        (:mod:`spanbreaker.state.calls`)."""
        shared = call.shared_repeats > repeats
        if shared:
            repeats = call.shared_repeats
        config = self.config
        if not self.no_polling_tools and config.is_polling_tool(call.name):
            return None
        limit = (None if self.no_polling_tools else config.policy_for(call.name).repeat_max) or config.tool_repeat_max
        if repeats < limit - 1:
            return None  # the common case: neither a warning nor a trip yet
        polling = scope.tools.polling(call.key)
        if polling:
            limit *= POLLING_ROOM
        if repeats >= limit:
            evidence: dict[str, object] = {"across_processes": True} if shared else {}
            if polling:
                evidence["polling"] = True
            return self.trip(
                f"{call.name} called {repeats + 1} times with identical arguments and identical results, "
                f"nothing changed in between{' (counted across the processes of this trace)' if shared else ''}",
                tool=call.name, identical_calls=repeats + 1, limit=limit,
                args_fingerprint=args_fingerprint(call.name, span.attributes, config.volatile_arg_keys,
                                                  config.max_attribute_chars), **evidence,
            )
        if limit > 1 and repeats == limit - 1:
            return self.warn(f"{call.name} repeated {repeats} times without progress", tool=call.name,
                             identical_calls=repeats + 1, limit=limit)
        return None
