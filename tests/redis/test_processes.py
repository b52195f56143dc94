"""Several processes, one trace (W3C traceparent), one breaker: real smolagents agents sharing state on Redis."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from .procs import Workers, traceparent
from .server import RedisServer

# Each healthy worker makes 7 model calls (6 lookups + the answer) of 220-232 tokens: 1,582 tokens alone.
BUDGET = {"max_tokens": 2400}


def _healthy_alone_ok(report: dict[str, Any]) -> None:
    assert report["error"] is None
    assert not report["tripped"] and report["record_detector"] is None
    assert report["exported"] == report["spans_started"]


def test_budget_neither_exceeds_alone_trips_across_both(redis_server: RedisServer, prefix: str,
                                                       tmp_path: Path) -> None:
    shared_tp, shared_hex = traceparent()
    alone_tp, alone_hex = traceparent()
    workers = Workers(tmp_path)
    common = {"state": redis_server.url, "prefix": prefix, "steps": 6, "delay": 0.08, "config": BUDGET}
    workers.start(traceparent=shared_tp, name="orchestrator", **common)
    workers.start(traceparent=shared_tp, name="specialist", **common)
    workers.start(traceparent=alone_tp, name="control", **common)  # same work, its own trace: the look-alike
    workers.release()
    first, second, control = workers.results()

    _healthy_alone_ok(control)
    for report in (first, second):
        assert report["error"] is None
        assert report["exported"] == report["spans_started"], "a span was lost"
        assert report["trace_ids"] == [shared_hex]
    # A process that finished its run before the other crossed the budget has nothing left to stop.
    detectors = {first["record_detector"], second["record_detector"]} - {None}
    assert detectors == {"token_budget"}
    tripped_here = [r for r in (first, second) if r["record_detector"]]
    assert all(r["marked"] > 0 for r in tripped_here), "the trip must be marked on the spans of the processes"
    shared = redis_server.client().hgetall(f"{prefix}:trace:{shared_hex}")
    assert int(shared[b"t"]) > BUDGET["max_tokens"] >= 1582
    assert int(shared[b"m"]) == first["model_calls"] + second["model_calls"]
    assert redis_server.client().hget(f"{prefix}:trace:{alone_hex}", "trip") is None


def test_trip_in_one_process_stops_the_others_next_call(redis_server: RedisServer, prefix: str,
                                                       tmp_path: Path) -> None:
    """The bystander holds inside its 3rd lookup until the looper has tripped (and it has flushed since), so the
    trip always lands mid-run, however the two processes happen to be scheduled."""
    tp, trace_hex = traceparent()
    workers = Workers(tmp_path)
    common = {"state": redis_server.url, "prefix": prefix, "traceparent": tp}
    tripped = tmp_path / "looper-done"
    looper_index = workers.start(name="looper", loop=True, steps=12, delay=0.05, **common)
    workers.start(name="bystander", steps=40, delay=0.1, hold={"step": 3, "path": str(tripped)}, **common)
    workers.release()
    workers.join(looper_index)
    tripped.touch()
    looper, bystander = workers.results()

    assert looper["tripped"] and looper["detector"] == "tool_repeat" and looper["error"] is None
    assert bystander["error"] is None
    assert bystander["tripped"] and bystander["detector"] == "tool_repeat", bystander
    assert bystander["evidence"]["origin"], "the bystander's trip came from the other process"
    assert bystander["tool_runs"] < 20, "the bystander kept working after the trace tripped elsewhere"
    assert bystander["marked"] > 0 and bystander["exported"] == bystander["spans_started"]
    assert bystander["trace_ids"] == looper["trace_ids"] == [trace_hex]


def test_kill_switch_from_a_third_process_stops_both(redis_server: RedisServer, prefix: str,
                                                    tmp_path: Path) -> None:
    """Both workers hold inside their 5th lookup until the operator's command has returned: the kill switch lands
    mid-run whether the command takes 0.3 s or 5 s to start. The command as the README gives it: ``spanbreaker open
    TRACE_ID --state redis://...``, then ``spanbreaker reset``."""
    tp, trace_hex = traceparent()
    workers = Workers(tmp_path)
    common = {"state": redis_server.url, "prefix": prefix, "traceparent": tp, "steps": 150, "delay": 0.05}
    stopped = tmp_path / "stopped"
    for name in ("one", "two"):
        workers.start(name=name, mark={"step": 5, "path": str(tmp_path / name)},
                      hold={"step": 5, "path": str(stopped)}, **common)
    workers.release()
    workers.wait_for(tmp_path / "one")
    workers.wait_for(tmp_path / "two")
    operator = subprocess.run(
        [str(Path(sys.executable).with_name("spanbreaker")), "open", trace_hex, "--state", redis_server.url,
         "--prefix", prefix, "--reason", "operator stop"], capture_output=True, text=True, timeout=30)
    assert operator.returncode == 0, operator.stderr
    stopped.touch()
    one, two = workers.results()
    for report in (one, two):
        assert report["error"] is None
        assert report["tripped"] and report["detector"] == "forced" and report["reason"] == "operator stop"
        assert 0 < report["tool_runs"] < 150
        assert report["exported"] == report["spans_started"]
    client = redis_server.client()
    assert client.hget(f"{prefix}:trace:{trace_hex}", "trip") is not None
    assert client.ttl(f"{prefix}:trace:{trace_hex}") > 0
    reset = subprocess.run(
        [str(Path(sys.executable).with_name("spanbreaker")), "reset", trace_hex, "--state", redis_server.url,
         "--prefix", prefix], capture_output=True, text=True, timeout=30)
    assert reset.returncode == 0, reset.stderr
    assert client.hget(f"{prefix}:trace:{trace_hex}", "trip") is None


def test_delegation_cycle_through_three_processes(redis_server: RedisServer, prefix: str, tmp_path: Path) -> None:
    """orchestrator (process 1) -> specialist (process 2) -> orchestrator (process 3): the path travels with
    each request (traceparent + spanbreaker-chain), so process 3 sees the cycle at its agent's start."""
    tp, trace_hex = traceparent()
    workers = Workers(tmp_path)
    to_specialist = {"request": str(tmp_path / "req1.json"), "response": str(tmp_path / "ans1.txt")}
    to_orchestrator = {"request": str(tmp_path / "req2.json"), "response": str(tmp_path / "ans2.txt")}
    common = {"state": redis_server.url, "prefix": prefix, "steps": 1, "traceparent": tp}
    workers.start(name="orchestrator", call=to_specialist, **common)
    workers.start(name="specialist", serve=to_specialist, call=to_orchestrator, **common)
    workers.start(name="orchestrator", serve=to_orchestrator, **common)
    workers.release()
    first, specialist, again = workers.results()

    assert again["error"] is None and again["tripped"] and again["detector"] == "delegation_cycle", again
    assert again["evidence"]["chain"] == ["orchestrator", "specialist", "orchestrator"]
    assert again["model_calls"] == 0, "the re-entered orchestrator must not run"
    for report in (first, specialist):
        assert report["error"] is None and report["trace_ids"] == [trace_hex]
        assert report["record_detector"] == "delegation_cycle", (first, specialist)
    assert (tmp_path / "ans2.txt").read_text() == "stopped: delegation_cycle"


def test_a_loop_split_over_two_processes_is_caught(redis_server: RedisServer, prefix: str, tmp_path: Path) -> None:
    """One agent whose steps run in two worker processes repeats one lookup with the same answer: 4 calls in
    each would pass (the local limit stops the 5th identical call), the shared ledger stops the loop before the
    8th. The look-alike: the same two workers, each in a trace of its own, run all 8 calls untripped."""
    shared_tp, shared_hex = traceparent()
    workers = Workers(tmp_path)
    common = {"state": redis_server.url, "prefix": prefix, "steps": 4, "loop": True, "think": 0.15,
              "name": "researcher"}
    workers.start(traceparent=shared_tp, **common)
    workers.start(traceparent=shared_tp, **common)
    workers.start(traceparent=traceparent()[0], **common)
    workers.start(traceparent=traceparent()[0], **common)
    workers.release()
    first, second, *alone = workers.results()

    for report in alone:
        _healthy_alone_ok(report)
        assert report["tool_runs"] == 4
    for report in (first, second):
        assert report["error"] is None
        assert report["exported"] == report["spans_started"], "a span was lost"
        assert report["trace_ids"] == [shared_hex]
    assert first["tool_runs"] + second["tool_runs"] < 8, "the loop ran to the end"
    assert {first["record_detector"], second["record_detector"]} == {"tool_repeat"}
    vetoed = [r for r in (first, second) if r["tripped"] and "origin" not in r["evidence"]]
    assert vetoed and vetoed[0]["evidence"]["across_processes"] is True, (first, second)
    assert vetoed[0]["evidence"]["identical_calls"] <= 6


def test_a_polled_result_that_moves_is_not_a_loop_across_processes(redis_server: RedisServer, prefix: str,
                                                                   tmp_path: Path) -> None:
    """The same call from both processes, its answer different each time (a job's progress): never a loop."""
    tp, _ = traceparent()
    workers = Workers(tmp_path)
    common = {"state": redis_server.url, "prefix": prefix, "steps": 4, "query": "status of build 7",
              "think": 0.1, "name": "researcher", "traceparent": tp}
    workers.start(**common)
    workers.start(**common)
    workers.release()
    for report in workers.results():
        _healthy_alone_ok(report)
        assert report["tool_runs"] == 4
