"""A real OTel SDK rig shared by the OpenAI Agents and pydantic-ai suites.

A private TracerProvider per test (the global one is never touched), an in-memory exporter, the breaker, and a
ledger that runs after the breaker and counts every span start and end, so "nothing lost" is checked on the
spans the framework really made. A probe records what each span carried when ``on_start`` saw it: the
conformance tests pin those facts per instrumentor.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel, field_validator

import spanbreaker
from spanbreaker.adapters.openinference import ADAPTER as OPENINFERENCE
from spanbreaker.instrumentation import attach
from spanbreaker.signals import Kind, classify


class Person(BaseModel):
    """A structured output that must validate (the structured-output retry tests: Instructor, pydantic-ai): a model
    that writes the name in lower case fails, one that fixes it after a re-ask passes."""

    name: str
    age: int

    @field_validator("name")
    @classmethod
    def upper_case(cls, value: str) -> str:
        if value != value.upper():
            raise ValueError("name must be upper case")
        return value


QUERIES = ["weather in Paris", "weather in Rome", "weather in Oslo"]
"""A healthy run: three different queries, then an answer."""
WIDE = ["timezone of Paris", "timezone of Rome", "timezone of Berlin", "timezone of Madrid", "timezone of Vienna",
        "timezone of Prague"]
"""Normal research: six different queries that all return the same answer."""
ORDERS = ["W1001", "W1002", "W1003", "W1004", "W1005"]
"""Order numbers tried in turn, none of them known: a lookup failing alike each time (the chat and error-loop
tests)."""


def search_body(rig: Rig, query: str, answer: Any = None) -> str:
    """The scripted tools' body: records the query; answers ``answer(query, n)`` or a fixed page per topic."""
    rig.tool_bodies.append(query)
    if answer is not None:
        return str(answer(query, len(rig.tool_bodies)))
    return "Central European Time (UTC+1)" if "timezone" in query else "Paris weather: sunny, 20C"


class Ledger(SpanProcessor):
    """Per span id: its start (name, kind and attribute keys seen by ``on_start``) and how often it ended."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started: dict[int, tuple[str, Kind, frozenset[str]]] = {}
        self.ended: dict[int, int] = {}

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        attributes = dict(span.attributes or {})
        with self.lock:
            self.started[span.context.span_id] = (span.name, classify(span.name, attributes), frozenset(attributes))

    def on_end(self, span: ReadableSpan) -> None:
        assert span.context is not None
        with self.lock:
            self.ended[span.context.span_id] = self.ended.get(span.context.span_id, 0) + 1

    def keys_at_start(self, kind: Kind) -> list[frozenset[str]]:
        return [keys for _, k, keys in self.started.values() if k is kind]


@dataclass
class Rig:
    provider: TracerProvider
    exporter: InMemorySpanExporter
    processor: spanbreaker.BreakerSpanProcessor
    ledger: Ledger
    tool_bodies: list[str] = field(default_factory=list)

    def spans(self) -> tuple[ReadableSpan, ...]:
        return self.exporter.get_finished_spans()

    def of_kind(self, kind: Kind) -> list[ReadableSpan]:
        return [s for s in self.spans() if classify(s.name, s.attributes or {}) is kind]

    def ran(self, kind: Kind) -> list[ReadableSpan]:
        """Calls of ``kind`` that actually ran (a blocked span's call never did)."""
        return [s for s in self.of_kind(kind) if not (s.attributes or {}).get("spanbreaker.blocked")]

    def tripped(self) -> list[ReadableSpan]:
        return [s for s in self.spans() if (s.attributes or {}).get("spanbreaker.tripped")]

    def blocked(self) -> list[ReadableSpan]:
        return [s for s in self.spans() if (s.attributes or {}).get("spanbreaker.blocked")]

    def assert_nothing_lost(self) -> None:
        """Every span that started was exported exactly once. The ledger runs after the breaker, so a span the
        breaker blocked in ``on_start`` is only seen ending: it must end once, like every other."""
        unended = [name for sid, (name, _, _) in self.ledger.started.items() if sid not in self.ledger.ended]
        assert unended == [], f"spans never ended: {unended}"
        assert [sid for sid, n in self.ledger.ended.items() if n != 1] == []
        ids = [s.context.span_id for s in self.spans() if s.context is not None]
        assert len(ids) == len(set(ids)), "a span was exported twice"
        assert set(self.ledger.started) <= set(ids), "a span that started was not exported"

    def assert_quiet(self) -> None:
        assert self.tripped() == [] and self.blocked() == [], [s.name for s in self.tripped()]
        assert self.processor.stats.trips == 0 and self.processor.stats.internal_errors == 0

    def assert_trip_marked(self, detector: str) -> None:
        """A blocked call, and the agent and root spans above it, carry the trip."""
        assert self.blocked(), "no span was marked blocked"
        marked = self.tripped()
        assert {(s.attributes or {}).get("spanbreaker.detector") for s in marked} == {detector}
        assert any(classify(s.name, s.attributes or {}) is Kind.AGENT for s in marked)
        roots = [s for s in self.spans() if s.parent is None]
        assert roots and all((s.attributes or {}).get("spanbreaker.tripped") for s in roots)


def make_rig(**overrides: Any) -> Rig:
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    processor = attach(provider, spanbreaker.BreakerConfig().replace(**overrides))
    exporter = InMemorySpanExporter()
    ledger = Ledger()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.add_span_processor(ledger)
    return Rig(provider, exporter, processor, ledger)


def put_back(attributes: Mapping[Any, Mapping[str, Any]]) -> None:
    """Set ``{owner: {name: value}}`` back on the owners (what an instrumentor's ``uninstrument`` left wrapped)."""
    for owner, values in attributes.items():
        for name, value in values.items():
            setattr(owner, name, value)


@contextmanager
def instrumentor_rigs(adapter: Any, instrumentor: Callable[[], Any],
                      restore: Mapping[Any, Any] | None = None) -> Iterator[Callable[..., Rig]]:
    """A fixture's body for an instrumentor that spanbreaker's ``adapter`` works with: ``make(instrumentor_first=
    False, **config)`` gives a rig with both on, the adapter first (or the instrumentor, as an application that
    instrumented it before spanbreaker). Both come off after the test; ``restore``: attributes to put back on their
    owners then (``{owner: {name: value}}``, for an instrumentor whose ``uninstrument`` leaves its wrappers)."""
    made: list[Rig] = []

    def make(instrumentor_first: bool = False, **overrides: Any) -> Rig:
        rig = make_rig(**overrides)
        if instrumentor_first:
            instrumentor().instrument(tracer_provider=rig.provider)
        adapter.instrument(rig.provider, rig.processor)
        if not instrumentor_first:
            instrumentor().instrument(tracer_provider=rig.provider)
        made.append(rig)
        return rig

    try:
        yield make
    finally:
        instrumentor().uninstrument()
        adapter.uninstrument()
        put_back(restore or {})
        for rig in made:
            rig.provider.shutdown()


# ------------------------------------------------------------------------------------------- conformance
ARGUMENT_KEYS = ("input.value", "gen_ai.tool.call.arguments", "tool_arguments")
"""Where the instrumentors measured here put a tool call's arguments (OpenInference, GenAI, pydantic-ai v2)."""
RESULT_KEYS = ("output.value", "gen_ai.tool.call.result", "tool_response")
CONFORMANCE_DOC = "docs/conformance.md"


@contextmanager
def adapter_rigs(adapter: Any) -> Iterator[Callable[..., Rig]]:
    """A fixture's body for a framework whose adapter puts its spans on a provider: ``make(**config)`` gives one rig
    per test with ``adapter`` instrumented on it (after undoing what an earlier suite left instrumented); the
    adapter comes off and the provider shuts down after the test."""
    from spanbreaker.instrumentation import uninstrument

    made: list[Rig] = []

    def make(**overrides: Any) -> Rig:
        assert not made, "one rig per test"
        uninstrument()  # a suite that left frameworks instrumented on its own provider
        rig = make_rig(**overrides)
        adapter.instrument(rig.provider, rig.processor)
        OPENINFERENCE.instrument(rig.provider, rig.processor)  # what spanbreaker.instrument() adds along with it
        made.append(rig)
        return rig

    try:
        yield make
    finally:
        adapter.uninstrument()
        OPENINFERENCE.uninstrument()
        for rig in made:
            rig.provider.shutdown()


class _SwitchTracer(trace.Tracer):
    def __init__(self, board: Switchboard, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.board, self.args, self.kwargs = board, args, kwargs

    def _target(self) -> trace.Tracer:
        provider = self.board.current.provider if self.board.current else trace.NoOpTracerProvider()
        return provider.get_tracer(*self.args, **self.kwargs)

    def start_span(self, *args: Any, **kwargs: Any) -> trace.Span:
        return self._target().start_span(*args, **kwargs)

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        return self._target().start_as_current_span(*args, **kwargs)


class Switchboard(trace.TracerProvider):
    """A process's global provider for frameworks that trace through it (Google ADK, AutoGen: it can be set only
    once per process): its tracers start spans on the current test's provider (:attr:`current`)."""

    current: Rig | None = None

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        return _SwitchTracer(self, args, kwargs)


def global_switchboard(tier: str) -> Switchboard:
    """A :class:`Switchboard` set as the process's global provider (a tier's session fixture: it can be set once)."""
    board = Switchboard()
    trace.set_tracer_provider(board)
    assert trace.get_tracer_provider() is board, f"another global tracer provider was set before the {tier} tier"
    return board


@contextmanager
def switchboard_rigs(board: Switchboard, framework_adapter: Any) -> Iterator[Callable[..., Rig]]:
    """A fixture's body for a tier on a :class:`Switchboard`: ``make(adapter=True, **config)`` gives the test's rig
    (one per test), the board's spans started on it, ``framework_adapter`` switched on for it (what
    ``spanbreaker.instrument()`` does) or off (the framework stock). The adapter comes off and the provider shuts down
    after the test."""
    made: list[Rig] = []

    def make(adapter: bool = True, **overrides: Any) -> Rig:
        assert not made, "one environment per test"
        rig = make_rig(**overrides)
        if adapter:
            framework_adapter.instrument(board, rig.processor)
        else:
            framework_adapter.uninstrument()
        board.current = rig
        made.append(rig)
        return rig

    try:
        yield make
    finally:
        framework_adapter.uninstrument()
        board.current = None
        for rig in made:
            rig.provider.shutdown()


def yes_no(value: bool) -> str:
    return "yes" if value else "no"


def tool_cells(rig: Rig) -> tuple[str, str, str]:
    """(kind at start?, arguments at start?, results at end?) over every tool span of a healthy run."""
    return tool_cells_of(rig.ledger, rig.spans())


def tool_cells_of(ledger: Ledger, spans: Sequence[ReadableSpan]) -> tuple[str, str, str]:
    """:func:`tool_cells` for any rig: the ledger saw the starts, ``spans`` are the exported ones."""
    starts = [(kind, keys) for _, kind, keys in ledger.started.values()]
    tools = [s for s in spans if classify(s.name, s.attributes or {}) is Kind.TOOL]
    assert tools, "the run made no tool span"
    tool_names = {s.name for s in tools}
    tool_starts = [(kind, keys) for (name, kind, keys) in ledger.started.values() if name in tool_names]
    assert tool_starts and starts
    kind_at_start = all(kind is Kind.TOOL for kind, _ in tool_starts)
    args_at_start = all(any(k in keys for k in ARGUMENT_KEYS) for _, keys in tool_starts)
    results_at_end = all(any((s.attributes or {}).get(k) for k in RESULT_KEYS) for s in tools)
    return yes_no(kind_at_start), yes_no(args_at_start), yes_no(results_at_end)


def conformance_row(framework: str, instrumentor: str, setup: str, cells: tuple[str, ...]) -> str:
    return "| " + " | ".join((framework, instrumentor, setup, *cells)) + " |"


def assert_documented(row: str) -> None:
    """The measured row is the one docs/conformance.md shows: an upgrade that changes a cell (or the version)
    fails here until the table is measured again."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / CONFORMANCE_DOC).read_text(encoding="utf-8")
    assert row in doc.splitlines(), f"{CONFORMANCE_DOC} lacks the measured row:\n{row}"
