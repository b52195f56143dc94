"""tool_cycle: a short sequence of calls (2 to 4) coming round again and again with the same results.

The oscillation: an edit, the tests, the edit undone, the tests again, and round; or search, open, scroll,
search... Each call taken alone looks like progress: the test run's answer changes every time it is made (it
alternates), so ``tool_repeat`` sees a change between its repeats and never counts. Taken as a sequence, the
agent is going round a closed loop: the last ``k`` calls, with their results, are the ``k`` before them, for
``cycle_repeats`` rounds. Only exact calls and exact results count (a page further on, a count that moved, an
edit that differs make a round different), a sequence of one repeated call is ``tool_repeat``'s, and a cycle
made inside one model turn (a batch) is not counted. Polling tools on the allowlist never enter a cycle, nor does a
round in which a call answers that the work it looks at is still under way (waiting on a build while reading its
log: :func:`~spanbreaker.conventions.tool_text.waiting`; ``tool_repeat`` bounds such a wait).

State: per agent scope, the last ``4 x cycle_repeats`` (call, result) keys, model turns and tool names, as
tuples (ints, and the names the calls already hold).
"""

from __future__ import annotations

from ..signals import ToolCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding

MAX_PERIOD = 4
"""Longest cycle looked for: calls per round."""


class ToolCycle(Detector):
    id = "tool_cycle"
    steerable = True

    def tool_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ToolCall) -> Finding | None:
        slots = scope.slots
        if not (call.args_known and call.result_known) or (
                not self.no_polling_tools and self.config.is_polling_tool(call.name)):
            slots.pop(self.id, None)  # an unknown call or a poll breaks any cycle
            return None
        rounds = self.config.cycle_repeats
        keep = MAX_PERIOD * rounds
        turn = scope.tools.turn
        key = hash((call.key, call.result_key))
        keys, turns, names = slots.get(self.id, ((), (), ()))
        if len(keys) >= keep:
            keys, turns, names = keys[1 - keep:], turns[1 - keep:], names[1 - keep:]
        keys, turns, names = (*keys, key), (*turns, turn), (*names, call.name)
        slots[self.id] = (keys, turns, names)
        size = len(keys)
        for period in range(2, MAX_PERIOD + 1):
            span_len = period * rounds
            if size < span_len:
                return None
            if keys[size - 1] != keys[size - 1 - period]:
                continue  # the newest call is not the one a round before it: no cycle of this period (most calls)
            if turn and turns[size - span_len] == turn:
                continue  # every call of these rounds in one model turn: a batch, not a loop
            last = keys[size - period:]
            if len(set(last)) < 2 or keys[size - span_len:] != last * rounds:
                continue
            if scope.tools.polling():
                return None  # a round that waits on work under way: polling
            following = names[size - period]  # the call that opens the next round (the one a steer fails)
            return self.trip(
                f"the same {period} calls came round {rounds} times with the same results "
                f"(next: {following})", period=period, rounds=rounds, tool=following, last_tool=call.name)
        return None
