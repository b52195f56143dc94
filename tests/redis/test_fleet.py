"""Fleet rule: a token or cost cap per service.name over a window, across traces and processes (each breaker here
has its own Redis client and threads, as a separate process would)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

import spanbreaker

from .server import RedisServer

SCOPE = "openinference.instrumentation.smolagents"


class Service:
    def __init__(self, url: str, prefix: str, name: str, **caps: float) -> None:
        self.processor = spanbreaker.BreakerSpanProcessor(
            state=url, state_prefix=prefix, state_staleness_s=0.02, fleet_window_s=60,
            **(caps or {"fleet_max_tokens": 1000}))
        self.provider = TracerProvider(resource=Resource.create({"service.name": name}))
        self.provider.add_span_processor(self.processor)
        self.tracer = self.provider.get_tracer(SCOPE)

    def run(self, trace_id: int, calls: int, tokens: int = 100, cost_usd: float | None = None) -> str | None:
        """An agent making ``calls`` model calls of ``tokens`` tokens (each reporting ``cost_usd`` when given);
        returns what tripped it, if anything."""
        parent = otel_trace.set_span_in_context(
            NonRecordingSpan(SpanContext(trace_id, 0xF1, is_remote=True, trace_flags=TraceFlags(1))))
        token = otel_context.attach(parent)
        try:
            with self.tracer.start_as_current_span("Agent.run", attributes={"openinference.span.kind": "AGENT"}):
                for _ in range(calls):
                    with self.tracer.start_as_current_span("Model.generate", attributes={
                            "openinference.span.kind": "LLM", "llm.model_name": "scripted"}) as span:
                        span.set_attribute("llm.token_count.prompt", tokens)
                        span.set_attribute("llm.token_count.completion", 0)
                        span.set_attribute("llm.token_count.total", tokens)
                        if cost_usd is not None:
                            span.set_attribute("llm.cost.total", cost_usd)
        except spanbreaker.Tripped as trip:
            return trip.detector
        finally:
            otel_context.detach(token)
        return None


@pytest.fixture
def services(redis_server: RedisServer, prefix: str) -> Iterator[dict[str, Service]]:
    made = {key: Service(redis_server.url, prefix, name)
            for key, name in (("a", "checkout"), ("b", "checkout"), ("other", "search"))}
    yield made
    for service in made.values():
        service.processor.shutdown()


def test_fleet_cap_trips_every_trace_of_the_service(services: dict[str, Service]) -> None:
    a, b, other = services["a"], services["b"], services["other"]
    assert a.run(0xA1, 6) is None  # 600 tokens: under the cap alone
    assert other.run(0xC1, 6) is None  # another service, its own fleet
    assert a.processor.shared.flush() and b.processor.shared.flush()
    assert b.run(0xB1, 6) is None  # 1,200 together, but b's own trace is fine until the next flush reads it
    assert b.processor.shared.flush() and a.processor.shared.flush()
    time.sleep(0.05)
    # Over the cap: a new trace of the service, in either process, is stopped at its first call.
    assert a.run(0xA2, 3) == "fleet_budget"
    assert b.run(0xB2, 3) == "fleet_budget"
    record = a.processor.trip_record(0xA2)
    assert record is not None and record.evidence["fleet"] == "checkout" and record.evidence["tokens"] >= 1200
    # The other service spent 600 and stays under its own cap.
    assert other.run(0xC2, 3) is None


def test_fleet_cost_cap_trips_every_trace_of_the_service(redis_server: RedisServer, prefix: str) -> None:
    """``fleet_max_cost_usd``: the same rule by dollars (each call's reported cost), tokens uncapped."""
    a, b = (Service(redis_server.url, prefix, "checkout", fleet_max_cost_usd=0.05) for _ in range(2))
    try:
        assert a.run(0xA1, 3, tokens=10_000, cost_usd=0.01) is None  # $0.03: under the cap alone
        assert b.run(0xB1, 3, tokens=10_000, cost_usd=0.01) is None  # $0.06 together, read at the next flush
        assert a.processor.shared.flush() and b.processor.shared.flush() and a.processor.shared.flush()
        time.sleep(0.05)
        assert a.run(0xA2, 1, cost_usd=0.0) == "fleet_budget"
        assert b.run(0xB2, 1, cost_usd=0.0) == "fleet_budget"
        record = b.processor.trip_record(0xB2)
        assert record is not None and record.evidence["cost_usd"] >= 0.06 and record.evidence["limit_usd"] == 0.05
        assert record.evidence["limit_tokens"] == 0 and "$0.06" in record.reason
    finally:
        for service in (a, b):
            service.processor.shutdown()
