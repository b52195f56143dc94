"""What the engine asks of shared state (``BreakerEngine.shared``): the whole contract, typed.

The engine calls these on the application's thread, before and after model and tool calls, so every method
must answer from memory and never wait on the network (see :mod:`.redis` for how the Redis client does that).
A failure is counted by the engine and detection goes on with the local view.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..breaker import TripRecord
from ..signals import ToolCall


class SharedState(Protocol):
    def remote_trip(self, trace_id: int) -> TripRecord | None:
        """A trip decided elsewhere for this trace, handed over once (the engine latches it); None mostly."""
        ...

    def add_usage(self, trace_id: int, tokens: int, model_calls: int, tool_calls: int, cost_usd: float) -> None:
        """This process spent this on the trace (summed and sent later)."""
        ...

    def tool_started(self, trace_id: int, agent: str, call: ToolCall, attributes: Mapping[str, Any]) -> None:
        """A tool call with recorded arguments starts: key it stably, fill ``call.shared_repeats`` (memory only)."""
        ...

    def tool_ended(self, trace_id: int, agent: str, call: ToolCall, attributes: Mapping[str, Any],
                   changed: bool, counted: bool) -> None:
        """A tool call ended and was recorded here: queue what it showed for the other processes."""
        ...

    def inherited_chain(self) -> tuple[str, ...]:
        """Agent names of the remote caller whose request started this part of the trace (outermost first)."""
        ...

    def publish_trip(self, trace_id: int, record: TripRecord) -> None:
        """This process tripped the trace: tell the others."""
        ...

    def reset(self, trace_id: int) -> None:
        """The trace's breaker was closed here: tell the others."""
        ...

    def close(self) -> None:
        """Stop background work (processor shutdown)."""
        ...
