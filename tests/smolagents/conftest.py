"""A real OTel SDK rig per test: TracerProvider + InMemorySpanExporter + spanbreaker on that provider only.

The global tracer provider is never touched; smolagents is uninstrumented at teardown so that suites sharing
the pytest process do not see each other's wrappers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import spanbreaker
from spanbreaker import BreakerConfig, BreakerSpanProcessor
from spanbreaker.instrumentation import uninstrument


@dataclass
class Rig:
    provider: TracerProvider
    exporter: InMemorySpanExporter
    processor: BreakerSpanProcessor

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, suffix: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name.endswith(suffix)]

    def tool_spans(self, tool: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if (s.attributes or {}).get("tool.name") == tool]

    def marked(self) -> list[ReadableSpan]:
        return [s for s in self.spans() if (s.attributes or {}).get("spanbreaker.tripped")]

    def assert_nothing_lost(self) -> None:
        """Every span that started was exported exactly once, with a status, and none is left open."""
        spans = self.spans()
        ids = [s.context.span_id for s in spans if s.context is not None]
        assert len(ids) == len(set(ids)), "a span was exported twice"
        assert self.processor.stats.spans_started == len(spans), (
            f"{self.processor.stats.spans_started} spans started, {len(spans)} exported")
        for span in spans:
            assert span.status.status_code is not StatusCode.UNSET, f"{span.name} ended without a status"

    def assert_trip_visible(self, detector: str) -> None:
        """The blocked span, its Step, its agent(s) and the root carry the trip attributes."""
        spans = {s.context.span_id: s for s in self.spans() if s.context is not None}
        blocked = [s for s in spans.values() if (s.attributes or {}).get("spanbreaker.blocked")]
        assert blocked, "no span was marked blocked"
        chain = [blocked[0]]
        while chain[-1].parent is not None and chain[-1].parent.span_id in spans:
            chain.append(spans[chain[-1].parent.span_id])
        kinds = {_kind(s) for s in chain}
        assert {"CHAIN", "AGENT"} <= kinds, [s.name for s in chain]
        for span in chain:
            attributes = span.attributes or {}
            if _kind(span) in ("CHAIN", "AGENT") or span is chain[0] or span is chain[-1]:
                assert attributes.get("spanbreaker.tripped") is True, f"{span.name} is not marked"
                assert attributes.get("spanbreaker.detector") == detector
                assert span.status.status_code is StatusCode.ERROR, f"{span.name} is {span.status.status_code}"


def _kind(span: ReadableSpan) -> str:
    return str((span.attributes or {}).get("openinference.span.kind", ""))


def make_rig(**config: Any) -> Rig:
    # A suite that ran earlier in this process may have left frameworks instrumented for its own provider
    # (instrument() is idempotent per framework): start from a clean slate so our provider gets the spans.
    uninstrument()
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    processor = spanbreaker.instrument(tracer_provider=provider, config=BreakerConfig(**config),
                                       frameworks=["smolagents"])
    assert processor is not None
    return Rig(provider, exporter, processor)


@pytest.fixture
def rig_factory() -> Iterator[Any]:
    made: list[Rig] = []

    def factory(**config: Any) -> Rig:
        rig = make_rig(**config)
        made.append(rig)
        return rig

    yield factory
    uninstrument()
    for rig in made:
        rig.provider.shutdown()


@pytest.fixture
def rig(rig_factory: Any) -> Rig:
    return rig_factory()
