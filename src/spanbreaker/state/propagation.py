"""The delegation path across processes, carried with the request like the ``traceparent`` it goes with.

Why not Redis: the callee checks for a delegation cycle when its agent span starts, and that check must not wait
on the network, while a value written to Redis by the caller a few milliseconds earlier may not have reached the
callee's local view yet. The request itself is on time by construction, so the caller's chain of agent names
travels in a ``spanbreaker-chain`` header (a JSON list of names, bounded) through a standard OpenTelemetry
``TextMapPropagator``: add :class:`ChainPropagator` to the composite propagator (next to ``tracecontext``) on
both sides. On the callee, a span whose parent is remote starts its chain from the extracted names, so
orchestrator -> specialist (process 2) -> orchestrator (process 3) is the cycle it is in one process.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace
from opentelemetry.propagators.textmap import (
    CarrierT,
    Getter,
    Setter,
    TextMapPropagator,
    default_getter,
    default_setter,
)

HEADER = "spanbreaker-chain"
_KEY = otel_context.create_key("spanbreaker-chain")
MAX_NAMES = 16
MAX_NAME_CHARS = 64

_processors: weakref.WeakSet[Any] = weakref.WeakSet()


def register(processor: Any) -> None:
    """Breakers whose open spans the propagator may look up (attached with shared state)."""
    _processors.add(processor)


def inherited_chain(context: otel_context.Context | None = None) -> tuple[str, ...]:
    """Agent names the remote caller was running (outermost first); empty when none came with the request."""
    value = otel_context.get_value(_KEY, context)
    return value if isinstance(value, tuple) else ()


def _chain_of(span_context: Any, context: otel_context.Context | None) -> tuple[str, ...]:
    for processor in list(_processors):
        trace = processor.engine.trace(span_context.trace_id)
        entry = trace.open.get(span_context.span_id) if trace is not None else None
        if entry is not None:
            return tuple(entry.chain)
    return inherited_chain(context)  # a process with no agent in between passes the caller's chain on


class ChainPropagator(TextMapPropagator):
    def inject(self, carrier: CarrierT, context: otel_context.Context | None = None,
               setter: Setter[CarrierT] = default_setter) -> None:
        span_context = otel_trace.get_current_span(context).get_span_context()
        if not span_context.is_valid:
            return
        chain = _chain_of(span_context, context)
        if chain:
            names = [name[:MAX_NAME_CHARS] for name in chain[-MAX_NAMES:]]
            setter.set(carrier, HEADER, json.dumps(names, separators=(",", ":")))

    def extract(self, carrier: CarrierT, context: otel_context.Context | None = None,
                getter: Getter[CarrierT] = default_getter) -> otel_context.Context:
        context = context if context is not None else otel_context.get_current()
        values = getter.get(carrier, HEADER)
        if not values:
            return context
        try:
            names = json.loads(values[0])
        except (TypeError, ValueError):
            return context
        if not isinstance(names, list):
            return context
        chain = tuple(str(name)[:MAX_NAME_CHARS] for name in names[-MAX_NAMES:] if isinstance(name, str))
        return otel_context.set_value(_KEY, chain, context) if chain else context

    @property
    def fields(self) -> set[str]:
        return {HEADER}


def names(values: Iterable[str]) -> str:
    """The header value for a chain (tests, non-OTel transports)."""
    return json.dumps(list(values)[-MAX_NAMES:], separators=(",", ":"))
