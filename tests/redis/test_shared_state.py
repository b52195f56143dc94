"""In-process checks of the shared-state client against the real server: kill switch in code and reset both
ways, what is stored, configuration. Two breakers here stand for two processes (own clients, own threads)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from opentelemetry import context as otel_context

import spanbreaker
from spanbreaker.breaker import BreakerState
from spanbreaker.state import open_trace, reset_trace
from spanbreaker.state.redis import RedisSharedState, _redact

from ..core.spans import Harness, make_harness
from .procs import in_trace, wait_until
from .server import RedisServer


def test_force_open_in_code_reaches_the_other_process(pair: tuple[Harness, Harness]) -> None:
    first, second = pair
    trace_id = 0x51A7E0001
    token = in_trace(trace_id)
    try:
        with second.agent("worker"):
            second.llm()
            first.processor.force_open(trace_id, "budget review")
            assert wait_until(lambda: bool(second.processor.shared._trips))
            with pytest.raises(spanbreaker.Tripped) as caught:
                second.llm()
    finally:
        otel_context.detach(token)
    assert caught.value.detector == "forced" and caught.value.reason == "budget review"
    record = second.processor.trip_record(trace_id)
    assert record is not None and record.detector == "forced" and record.blocked_calls == 1


def test_reset_from_the_kill_switch_closes_every_breaker(pair: tuple[Harness, Harness], redis_server: RedisServer,
                                                         prefix: str) -> None:
    first, second = pair
    trace_id = 0x51A7E0002
    token = in_trace(trace_id)
    try:
        with first.agent("a"), second.agent("b"):
            first.llm()
            second.llm()
            open_trace(redis_server.url, trace_id, "incident 42", prefix=prefix)
            for harness in pair:
                assert wait_until(lambda h=harness: bool(h.processor.shared._trips))  # type: ignore[misc]
                with pytest.raises(spanbreaker.Tripped):
                    harness.llm()
                assert harness.processor.state(trace_id) is BreakerState.OPEN
            reset_trace(redis_server.url, f"{trace_id:032x}", prefix=prefix)
            assert wait_until(lambda: all(h.processor.state(trace_id) is BreakerState.CLOSED for h in pair))
            first.llm()
            second.llm()  # both run again
    finally:
        otel_context.detach(token)


def test_only_figures_and_ids_are_stored(pair: tuple[Harness, Harness], redis_server: RedisServer,
                                         prefix: str) -> None:
    first, _ = pair
    trace_id = 0x51A7E0003
    token = in_trace(trace_id)
    try:
        with first.agent("a", task="SECRET TASK TEXT"):
            first.llm(input_value="SECRET PROMPT")
            first.tool("search", {"query": "SECRET ARGUMENT"}, output="SECRET RESULT")
            assert first.processor.shared.flush()
    finally:
        otel_context.detach(token)
    client = redis_server.client()
    dump = b"".join(k + b"".join(v for kv in client.hgetall(k).items() for v in kv)
                    for k in client.scan_iter(match=f"{prefix}:*"))
    assert dump and b"SECRET" not in dump
    key = f"{prefix}:trace:{trace_id:032x}"
    assert 0 < client.ttl(key) <= 3600
    assert int(client.hget(key, "m")) == 1 and int(client.hget(key, "c")) == 1


def test_error_text_and_model_code_are_not_stored(pair: tuple[Harness, Harness], redis_server: RedisServer,
                                                  prefix: str) -> None:
    """A code-repair loop trips on its error class; the stored trip names the class, not the code or the key."""
    first, _ = pair
    trace_id = 0x51A7E0005
    message = ("Code execution failed at line 'print(table[\"SECRET-4471\"])' due to: InterpreterError: Could not "
               "index {'a': 1} with 'SECRETError': KeyError: 'SECRETError'")
    token = in_trace(trace_id)
    try:
        with pytest.raises(spanbreaker.Tripped) as caught, first.agent("a"):
            for n in range(1, 10):
                first.failed_step(n, message)
        assert first.processor.shared.flush()
    finally:
        otel_context.detach(token)
    assert caught.value.detector == "error_loop" and caught.value.evidence["exception_type"] == "KeyError"
    client = redis_server.client()
    assert wait_until(lambda: any(client.scan_iter(match=f"{prefix}:*")))
    dump = b"".join(k + b"".join(v for kv in client.hgetall(k).items() for v in kv)
                    for k in client.scan_iter(match=f"{prefix}:*") if client.type(k) == b"hash")
    assert b"KeyError" in dump and b"SECRET" not in dump


def test_state_url_from_the_environment(redis_server: RedisServer, prefix: str) -> None:
    config = spanbreaker.BreakerConfig.from_env({"SPANBREAKER_STATE_URL": redis_server.url,
                                                 "SPANBREAKER_STATE_PREFIX": prefix,
                                                 "SPANBREAKER_FLEET_MAX_TOKENS": "5000"})
    processor = spanbreaker.BreakerSpanProcessor(config)
    try:
        assert isinstance(processor.shared, RedisSharedState) and processor.shared.fleet is not None
    finally:
        processor.shutdown()
    assert _redact("redis://user:hunter2@host:6379/0") == "redis://***@host:6379/0"


def test_password_in_the_url(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    server = RedisServer(tmp_path / "auth", password="s3cret-pw").start()
    try:
        harness = make_harness(state=server.url, state_staleness_s=0.02)
        wrong = make_harness(state=server.url.replace("s3cret-pw", "wrong"), state_staleness_s=0.02)
        token = in_trace(0x51A7E0004)
        try:
            with caplog.at_level(logging.WARNING, logger="spanbreaker.state"), harness.agent("a"), wrong.agent("b"):
                harness.llm()
                wrong.llm()  # a bad password is an outage like any other: no error reaches the app
                assert harness.processor.shared.flush() and not wrong.processor.shared.flush(0.5)
        finally:
            otel_context.detach(token)
            harness.processor.shutdown()
            wrong.processor.shutdown()
        assert int(server.client().hget(f"spanbreaker:trace:{0x51A7E0004:032x}", "m")) == 1
        assert wrong.processor.stats.state_errors > 0
        assert "s3cret-pw" not in caplog.text and "wrong" not in caplog.text
    finally:
        server.stop()


def test_unix_socket_url(tmp_path: Path) -> None:
    sock = tmp_path / "r.sock"
    server = RedisServer(tmp_path / "unix", unix_socket=sock).start()
    try:
        harness = make_harness(state=f"unix://{sock}?db=0", state_staleness_s=0.02)
        token = in_trace(0x51A7E0005)
        try:
            with harness.agent("a"):
                harness.llm()
                assert harness.processor.shared.flush()
        finally:
            otel_context.detach(token)
            harness.processor.shutdown()
        assert int(server.client().hget(f"spanbreaker:trace:{0x51A7E0005:032x}", "m")) == 1
    finally:
        server.stop()
