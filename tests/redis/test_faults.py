"""Redis killed, paused past the timeout, restarted: the application never sees it, sharing resumes.

Each test owns its redis-server (``own_redis``: the session one is shared and must stay up).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

import spanbreaker

from ..core.spans import Harness, make_harness
from .procs import Workers, traceparent, wait_until
from .server import RedisServer, free_port


def test_kill_pause_restart_mid_run(own_redis: RedisServer, tmp_path: Path) -> None:
    """A real agent runs through a SIGSTOP longer than the socket timeout, a kill and a restart of Redis.

    Paced by events, not by the clock: Redis is paused once the agent is stepping (its 5th lookup), and the agent
    holds at its 40th lookup until Redis has been restarted and this process has flushed to it again, so the
    last lookups, the answer and the final flush happen after the restart on a fast machine as on a slow one.
    """
    tp, trace_hex = traceparent()
    workers = Workers(tmp_path)
    stepping, restarted = tmp_path / "stepping", tmp_path / "restarted"
    workers.start(state=own_redis.url, prefix="faults", traceparent=tp, steps=45, delay=0.04, name="steady",
                  mark={"step": 5, "path": str(stepping)}, hold={"step": 40, "path": str(restarted)})
    workers.release()
    workers.wait_for(stepping)
    own_redis.pause()
    time.sleep(1.0)  # the outage lasts twice the socket timeout (the agent keeps stepping or holds meanwhile)
    own_redis.resume()
    time.sleep(0.3)
    own_redis.kill()
    time.sleep(0.4)
    own_redis.start()  # same port, empty data set (no persistence)
    restarted.touch()
    (report,) = workers.results()

    assert report["error"] is None and not report["tripped"], report
    assert report["exported"] == report["spans_started"], "a span was lost"
    # Redis was paused for 1 s (twice the socket timeout): a step that waited on it would leave a gap that long
    # between the end of one tool and the start of the next (the agent's own time: model call, spans, breaker).
    assert report["max_gap_between_tools"] < 0.45, "the agent waited on Redis"
    assert report["state_errors"] > 0, "the outage was not counted"
    assert report["state_warnings"] == 1
    shared = own_redis.client().hgetall(f"faults:trace:{trace_hex}")
    # After the restart the hash was re-seeded with this process's whole contribution, counted exactly once.
    assert int(shared[b"m"]) == report["model_calls"] == 46
    assert int(shared[b"c"]) == 46  # 45 lookups and final_answer


def _remote_parent(trace_id: int) -> otel_context.Context:
    span_context = SpanContext(trace_id, 0x5EED, is_remote=True, trace_flags=TraceFlags(1))
    return otel_trace.set_span_in_context(NonRecordingSpan(span_context))


def _looping_run(harness: Harness, trace_id: int, calls: int) -> tuple[str | None, list[float]]:
    """A tool called with identical arguments again and again; returns the detector that stopped it."""
    token = otel_context.attach(_remote_parent(trace_id))
    durations: list[float] = []
    try:
        with harness.agent("looper"):
            for _ in range(calls):
                started = time.perf_counter()
                harness.llm()
                harness.tool("fetch", {"url": "same"}, output="same page")
                durations.append(time.perf_counter() - started)
    except spanbreaker.Tripped as trip:
        return trip.detector, durations
    finally:
        otel_context.detach(token)
    return None, durations


def test_detection_goes_on_while_redis_is_paused(own_redis: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    harness = make_harness(state=own_redis.url, state_prefix="paused", state_staleness_s=0.02)
    shared = harness.processor.shared
    try:
        _looping_run(harness, 0xFEED0000, 1)  # first spans pay one-off lazy imports, not Redis
        assert shared.flush(3.0)
        own_redis.pause()
        with caplog.at_level(logging.WARNING, logger="spanbreaker.state"):
            detector, durations = _looping_run(harness, 0xFEED0001, 20)
            assert wait_until(lambda: shared.degraded), "no flush timed out"
        assert detector == "tool_repeat"
        assert max(durations) < 0.05, f"a span waited on Redis: {max(durations):.3f}s"
        assert harness.processor.stats.state_errors > 0 and shared.degraded
        assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
        own_redis.resume()
        assert shared.flush(3.0) and not shared.degraded
        stored = own_redis.client().hgetall(f"paused:trace:{0xFEED0001:032x}")
        assert stored[b"trip"] and b"same page" not in stored[b"trip"] and b'"same"' not in stored[b"trip"]
    finally:
        own_redis.resume()
        harness.processor.shutdown()
    assert harness.spans() and all(s.end_time for s in harness.spans())


def test_redis_absent_from_the_start_costs_nothing() -> None:
    harness = make_harness(state=f"redis://127.0.0.1:{free_port()}/0", state_staleness_s=0.02)
    try:
        _looping_run(harness, 0xFEED0000, 1)
        detector, durations = _looping_run(harness, 0xFEED0002, 20)
        assert detector == "tool_repeat"
        assert max(durations) < 0.05
        assert wait_until(lambda: harness.processor.stats.state_errors > 0)
    finally:
        started = time.monotonic()
        harness.processor.shutdown()
        assert time.monotonic() - started < 2.0, "shutdown hung on an absent Redis"
