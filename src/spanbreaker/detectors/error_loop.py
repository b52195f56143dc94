"""error_loop: the same root exception class, step after step (the code-repair loop).

The root class is unwrapped from framework wrappers (smolagents reports a ``KeyError`` in agent code as
``AgentExecutionError``). Meeting a *different* error is progress and resets the count, as does a clean step.
Steps are ``Step N`` spans where the framework has them. Where it has none (the OpenAI Agents SDK, pydantic-ai,
LangGraph), a model turn is the step: the tool calls one model call asked for are one decision, and four parallel
calls failing alike in one turn are one failed step, not four; the same call made again within the turn (the
framework retrying it, BeeAI's ``retry_options``) is a step of its own. With neither steps nor model calls, each
tool call directly under an agent is a step. Parse and format errors belong to ``format_loop``. A step whose own span
ended cleanly takes the error of its last tool call: a tool that reports failure only as text (``exitcode: 1
(execution failed)``, "command not found", see :mod:`spanbreaker.conventions.tool_text`) leaves the step span
clean, and the loop is still a loop.
"""

from __future__ import annotations

from ..signals import StepEnd, ToolCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding

_CLEAN = (None, 0)
"""The state after a step without error (shared: tuples are immutable)."""
_STEP_TOOL_ERROR = "error_loop.step_tool"
"""Slot: the error class of the last tool call in the step now running, when it failed."""
_TURN = "error_loop.turn"
"""Slot, for tool calls outside any step: (the model turn they belong to, the streak as it stood before that turn,
the keys of the turn's last calls)."""
_TURN_CALLS = 16
"""Calls of one turn remembered to tell a retry (the same call again) from the turn's other calls."""


class ErrorLoop(Detector):
    id = "error_loop"

    def step_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, step: StepEnd) -> Finding | None:
        error = step.error
        if error is None:
            error = scope.slots.pop(_STEP_TOOL_ERROR, None)
            if error is None:  # the common case, without the call
                scope.slots[self.id] = _CLEAN
                return None
        else:
            scope.slots.pop(_STEP_TOOL_ERROR, None)
        return self._observe(scope, error, span)

    def tool_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ToolCall) -> Finding | None:
        if span.step is not None:  # counted once, at the step: remember the step's last tool error for it
            if call.error is not None:
                scope.slots[_STEP_TOOL_ERROR] = call.error
            elif _STEP_TOOL_ERROR in scope.slots:
                del scope.slots[_STEP_TOOL_ERROR]
            return None
        turn = scope.tools.turn
        if turn:  # the model turn is the step: its last call's error is the turn's, as a step's is
            slots = scope.slots
            counting = slots.get(_TURN)
            if counting is None or counting[0] != turn or (call.args_known and call.key in counting[2]):
                # a new turn, or the same call again within it (the framework retrying it): a step of its own
                counting = (turn, slots.get(self.id, _CLEAN), (call.key,) if call.args_known else ())
            elif call.args_known:
                counting = (turn, counting[1], (*counting[2][1 - _TURN_CALLS:], call.key))
            slots[_TURN] = counting
            slots[self.id] = counting[1]  # this call's outcome replaces an earlier call's of the same turn
        return self._observe(scope, call.error, span)

    def _observe(self, scope: AgentScope, error: str | None, span: OpenSpan) -> Finding | None:
        if error is None:  # the common case: the streak resets, nothing to report
            scope.slots[self.id] = _CLEAN
            return None
        if error in self.config.format_error_types:
            error = None
        last, count = scope.slots.get(self.id, (None, 0))
        count = count + 1 if error is not None and error == last else (1 if error is not None else 0)
        scope.slots[self.id] = (error, count)
        limit = self.config.error_repeat_max
        if error is None:
            return None
        if count >= limit:
            return self.trip(f"{count} consecutive steps failed with {error}", exception_type=error,
                             consecutive_steps=count, limit=limit)
        if count == limit - 1:
            return self.warn(f"{count} consecutive steps failed with {error}", exception_type=error,
                             consecutive_steps=count, limit=limit)
        return None
