"""validation_failures: structured output that does not validate, again and again.

A run's structured-output failure is reported by its adapter (Agno's silent ``output_schema`` failures) as
the span attribute ``spanbreaker.validation_failed = true`` on the agent span, or shows as an agent error of a
validation class (``ValidationError``, ``OutputCheckError``; both read in :mod:`spanbreaker.conventions.frameworks`).
Counted per trace and per session, because
each run of a session is usually its own trace. Only failures in a row count: a run of the same agent that ends
cleanly (in the trace), or any clean run of the session, starts the count again. A long-lived chat session whose
structured output fails now and then, and validates in between, is not a retry loop.
"""

from __future__ import annotations

from ..signals import AgentRun
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding

_SLOT = "validation_failures:"
"""Trace slot prefix: the agent's failures in a row, per agent name."""


class ValidationFailures(Detector):
    id = "validation_failures"

    def agent_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, run: AgentRun) -> Finding | None:
        key = _SLOT + run.name
        if not run.validation_failed:
            if run.error is None and key in trace.slots:
                del trace.slots[key]  # this agent's output validated: its failures are no longer in a row
            return None
        count = trace.slots.get(key, 0) + 1
        trace.slots[key] = count
        total = max(count, run.session_failures)
        limit = self.config.validation_failure_max
        if total >= limit:
            return self.trip(f"{total} structured outputs failed validation", failures=total, limit=limit,
                             agent=run.name)
        return self.warn(f"structured output failed validation ({total} of {limit})", failures=total,
                         limit=limit)
