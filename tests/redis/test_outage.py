"""A long Redis outage: memory stays bounded, queued writes reach Redis once, what waited is counted once.

Each test owns its redis-server (``own_redis``) and kills or pauses it while real SDK traces start and end.
"""

from __future__ import annotations

import gc
import logging
import tracemalloc
from collections.abc import Iterator

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

import spanbreaker
from spanbreaker.state import redis as redis_state

from .procs import wait_until
from .server import RedisServer

SCOPE = "openinference.instrumentation.smolagents"
STEPS = 6
TRACES = 300


class Service:
    """One process's breaker on the test's Redis; no exporter, so retained memory is the breaker's own."""

    def __init__(self, url: str) -> None:
        self.processor = spanbreaker.BreakerSpanProcessor(state=url, state_prefix="outage", state_staleness_s=0.02)
        self.provider = TracerProvider()
        self.provider.add_span_processor(self.processor)
        self.tracer = self.provider.get_tracer(SCOPE)
        self.shared: redis_state.RedisSharedState = self.processor.shared

    def run(self, trace_id: int, steps: int = STEPS) -> None:
        """An agent run that ends: per step a model call (100 + 10 tokens) and a tool call with new arguments."""
        parent = otel_trace.set_span_in_context(
            NonRecordingSpan(SpanContext(trace_id, 0x0B, is_remote=True, trace_flags=TraceFlags(1))))
        token = otel_context.attach(parent)
        try:
            with self.tracer.start_as_current_span("Agent.run", attributes={"openinference.span.kind": "AGENT"}):
                for number in range(steps):
                    with self.tracer.start_as_current_span("Model.generate", attributes={
                            "openinference.span.kind": "LLM", "llm.model_name": "scripted"}) as span:
                        span.set_attribute("llm.token_count.prompt", 100)
                        span.set_attribute("llm.token_count.completion", 10)
                        span.set_attribute("llm.token_count.total", 110)
                    with self.tracer.start_as_current_span("lookup", attributes={
                            "openinference.span.kind": "TOOL", "tool.name": "lookup",
                            "input.value": f'{{"kwargs": {{"q": "topic {trace_id} {number}"}}}}'}) as span:
                        span.set_attribute("output.value", f"facts about {trace_id} {number} " * 10)
        finally:
            otel_context.detach(token)

    def cycles_pass(self, count: int = 2) -> bool:
        """Wait until the flusher has run ``count`` more cycles (the first may have begun before the call)."""
        start = self.shared.stats.cycles
        return wait_until(lambda: self.shared.stats.cycles >= start + count)


@pytest.fixture
def service(own_redis: RedisServer) -> Iterator[Service]:
    made = Service(own_redis.url)
    made.run(0xA0)  # lazy imports and the script load happen before anything is measured
    assert made.shared.flush(3.0)
    yield made
    made.processor.shutdown()


def _stored(server: RedisServer, trace_id: int) -> dict[bytes, bytes]:
    return server.client().hgetall(f"outage:trace:{trace_id:032x}")  # type: ignore[no-any-return]


def test_traces_ended_during_an_outage_keep_only_their_figures(own_redis: RedisServer, service: Service) -> None:
    own_redis.kill()
    assert wait_until(lambda: service.shared.degraded)
    tracemalloc.start()
    try:
        gc.collect()
        baseline = tracemalloc.get_traced_memory()[0]
        traces = range(0xB000, 0xB000 + TRACES)
        for trace_id in traces:
            service.run(trace_id)
        assert service.cycles_pass()
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
    # Holding each trace's whole state would be several KiB a trace; what waits for Redis is ~0.5 KiB a trace.
    assert retained < TRACES * 1024, f"{retained / TRACES:.0f} bytes retained per ended trace"
    assert service.shared.stats.backlog_dropped == 0

    own_redis.start()  # empty: every hash is re-created from this process's contribution, counted once
    assert service.shared.flush(5.0) and not service.shared.degraded
    for trace_id in traces:
        stored = _stored(own_redis, trace_id)
        assert (int(stored[b"m"]), int(stored[b"c"]), int(stored[b"t"])) == (STEPS, STEPS, 110 * STEPS), trace_id


def test_backlog_is_bounded_and_the_overflow_counted(own_redis: RedisServer, service: Service,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(redis_state, "MAX_BACKLOG", 50)
    own_redis.kill()
    assert wait_until(lambda: service.shared.degraded)
    errors = service.processor.stats.state_errors
    traces = list(range(0xC000, 0xC000 + 120))
    with caplog.at_level(logging.WARNING, logger="spanbreaker.state"):
        for trace_id in traces:
            service.run(trace_id, steps=2)
        assert service.cycles_pass()
    assert service.shared.stats.backlog_dropped == 70
    assert service.processor.stats.state_errors >= errors + 70
    overflow = [r for r in caplog.records if "dropping the oldest" in r.getMessage()]
    assert len(overflow) == 1 and overflow[0].levelno == logging.WARNING

    own_redis.start()
    assert service.shared.flush(5.0)
    assert all(_stored(own_redis, trace_id) == {} for trace_id in traces[:70]), "the oldest were dropped"
    assert all(int(_stored(own_redis, trace_id)[b"m"]) == 2 for trace_id in traces[70:]), "the newest wait"


def test_writes_queued_while_paused_land_once(own_redis: RedisServer, service: Service) -> None:
    """A trip and usage queued while Redis is paused (SIGSTOP, past the socket timeout, for several cycles): once
    it resumes the trip is published once or twice (the attempt that met the outage, the retry after it) and
    every trace's usage is counted exactly once."""
    client = own_redis.client()
    client.config_resetstat()
    own_redis.pause()
    try:
        service.processor.force_open(0xD001, "operator stop")  # the trip waits in the queue
        assert service.shared.degraded
        errors = service.shared.stats.errors
        assert wait_until(lambda: service.shared.stats.errors >= errors + 4), "the outage lasted four attempts"
        traces = list(range(0xD100, 0xD100 + 20))
        for trace_id in traces:  # usage waits too
            service.run(trace_id, steps=2)
        assert service.cycles_pass()
    finally:
        own_redis.resume()
    assert service.shared.flush(5.0)
    stats = client.info("commandstats")
    calls = {name: stats.get(f"cmdstat_{name}", {}).get("calls", 0) for name in ("publish", "evalsha", "eval")}
    assert 1 <= calls["publish"] <= 2, calls
    assert 0 < calls["evalsha"] + calls["eval"] <= 2 * len(traces), calls
    assert client.hget("outage:trace:" + f"{0xD001:032x}", "trip") is not None
    assert all(int(_stored(own_redis, trace_id)[b"m"]) == 2 for trace_id in traces)
