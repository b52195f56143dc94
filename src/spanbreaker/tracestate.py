"""Per-trace and per-agent state the processor keeps while a trace is live.

A trace's state is dropped when its local root span ends; an LRU cap and an idle TTL cover traces whose root
never ends. Agent scopes are keyed by agent *name* within the trace, so a managed agent called five times
shares one history (its repeated delegations are visible) while its calls never mix with its caller's.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .breaker import TraceBreaker
from .kinds import Kind
from .progress import ToolHistory
from .signals import AgentRun, ModelCall, ToolCall

MAX_OPEN_SPANS = 4096
"""Open spans tracked per trace; beyond it new spans are not tracked (they still export normally)."""
NAME_CHARS = 256
"""Characters of a span name kept on an open span and in a trip record."""
NO_ATTRIBUTES: Mapping[str, Any] = MappingProxyType({})
"""What an open span holds of its attributes once its start hooks ran."""


@dataclass(slots=True, eq=False)
class OpenSpan:
    span_id: int
    parent_id: int | None
    kind: Kind
    scope: AgentScope | None
    """The nearest agent's scope (its own for AGENT spans); None outside any agent (the trace's '' scope)."""
    chain: tuple[str, ...]
    """Agent names from the root down to this span's agent."""
    step: str | None
    """Name of the nearest CHAIN ('Step N') span, if any."""
    signal: ToolCall | ModelCall | AgentRun | None
    name: str
    """The span's name, cut to :data:`NAME_CHARS` (a trip record carries it after the trace ended)."""
    attributes: Mapping[str, Any]
    """The span's attributes while its start hooks run (tool_repeat fingerprints from them), then
    :data:`NO_ATTRIBUTES`: an open span never keeps a whole attribute value (a 200 KB prompt on a span whose
    trace is abandoned would stay until the LRU cap or the TTL dropped the trace). A tool call's end hooks see
    its end attributes here (the span is no longer open then): arguments that arrive only with the end."""
    ref: Any
    """The caller's object for the span (the façade's SDK span): a weak reference to it when :attr:`weak` (an
    abandoned model or tool call span the application let go must not be kept alive, attributes and all, by the
    breaker), else the object itself. Read it through :attr:`handle`."""
    openinference: bool = False
    """The span carries OpenInference's span kind (tells two instrumentors' spans of one call or step apart from one
    instrumentor's nested ones)."""
    weak: bool = False
    probe: bool = False
    tool_calls: int = 0
    """Tool calls started under this span (CHAIN spans: per-step count)."""
    paired: bool = False
    """A model or tool call span whose double (the same call seen by an instrumentor of the other convention) was
    found: the double is not counted, and no other span pairs with this one."""
    prompt_read: bool = False
    """A model call whose prompt was read for the tool calls it shows as the call started (on the span, or shown in
    process by an adapter): not read again from the span at its end. The instrumentor's record of the same request
    is serialised otherwise (OpenLIT's Gemini messages: no call ids, other positions), and read twice each turn's
    calls counted twice (a loop was caught one call early, as a ``tool_cycle``)."""

    @property
    def handle(self) -> Any:
        """The caller's object for the span, handed back in verdicts (None once dropped); never looked into."""
        return self.ref() if self.weak else self.ref

    @property
    def agent(self) -> str:
        """Name of the nearest agent (itself for AGENT spans); '' outside any agent."""
        return self.scope.name if self.scope is not None else ""


@dataclass(slots=True)
class AgentScope:
    name: str
    tools: ToolHistory
    slots: dict[str, Any] = field(default_factory=dict)
    """Per-detector state for this agent (keyed by detector id)."""
    _delegations: ToolHistory | None = None

    @property
    def delegations(self) -> ToolHistory:
        """The agents this one called (callee, task) and what they returned: made at its first delegation, since
        most agents delegate to none (a history and its window cost about 1 KiB and 3 tracked objects)."""
        history = self._delegations
        if history is None:
            history = self._delegations = ToolHistory(self.tools.similarity)
        return history

    def forget(self) -> None:
        """Start detection afresh. In place: open spans hold this scope and pass it to their children."""
        self.tools = ToolHistory(self.tools.similarity)
        self._delegations = None
        self.slots.clear()


@dataclass(slots=True)
class Totals:
    tokens: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    cost_usd: float = 0.0


class TraceState:
    __slots__ = ("breaker", "calls_from_prompts", "conventions", "last_seen", "lock", "open", "remote", "root_id",
                 "scopes", "similarity", "slots", "totals", "trace_id", "warned")

    def __init__(self, trace_id: int, similarity: float, now: float) -> None:
        self.trace_id = trace_id
        self.similarity = similarity
        self.lock = threading.RLock()
        self.breaker = TraceBreaker()
        self.open: dict[int, OpenSpan] = {}
        self.root_id: int | None = None
        self.scopes: dict[str, AgentScope] = {}
        self.slots: dict[str, Any] = {}
        self.totals = Totals()
        self.remote: Totals | None = None
        """What other processes spent on this trace (shared state); None when state is local."""
        self.warned: set[tuple[str, str]] = set()
        self.last_seen = now
        self.calls_from_prompts = 0
        """Tool calls read from model prompts (:mod:`~spanbreaker.conventions.prompt_calls`), counted in
        ``totals.tool_calls`` too: while the two are equal the trace has recorded no tool span of its own."""
        self.conventions = 0
        """Bits: 1, a model or tool call span of OpenInference's seen; 2, one of another convention (see
        ``engine._mixed``)."""

    def scope(self, agent: str) -> AgentScope:
        scope = self.scopes.get(agent)
        if scope is None:
            scope = AgentScope(agent, ToolHistory(self.similarity))
            if len(self.scopes) < 256:
                self.scopes[agent] = scope
        return scope

    def usage(self) -> Totals:
        """Budgets are judged on this: local spending plus what other processes reported.

        Hot callers write ``trace.totals if trace.remote is None else trace.usage()``: the same answer without
        a call when state is local.
        """
        local, remote = self.totals, self.remote
        if remote is None:
            return local
        return Totals(local.tokens + remote.tokens, local.model_calls + remote.model_calls,
                      local.tool_calls + remote.tool_calls, local.cost_usd + remote.cost_usd)

    def forget_progress(self) -> None:
        """After a successful HALF_OPEN probe: start detection afresh, keep the budgets."""
        for scope in self.scopes.values():
            scope.forget()
        self.slots.clear()
        self.warned.clear()
