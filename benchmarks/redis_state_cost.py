"""What shared state on Redis costs per span, and how far a trace can overrun a budget between two flushes.

1. Per-span cost: the same healthy agent workload (per step a ``Step N`` CHAIN span with one LLM span and one TOOL
   span, OpenInference-shaped, through a real SDK ``TracerProvider``) runs on a bare provider, with the breaker
   keeping state in memory, and with the breaker sharing state on a real ``redis-server`` on loopback. Rounds are
   interleaved and the fastest of each kept. The hot path never waits on Redis, so the ratio stays near 1.
2. Worst-case overrun: two breakers (two processes' worth: each its own Redis client and threads) share one trace
   with ``max_model_calls``; both call the model in a loop at a given interval until the trace trips. The calls
   admitted past the budget are what the others did inside one staleness window (they see each other's spend only
   at the next flush): about (processes - 1) x staleness / interval, plus one per process.

    python benchmarks/redis_state_cost.py [--rounds 5] [--url redis://127.0.0.1:6379/0]

Without ``--url`` it starts ``redis-server`` on a free loopback port (``make redis-server`` installs it).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from processor_cost import BUDGETS, SCOPE
from processor_cost import early as per_span_ns  # the same healthy workload as the in-memory cost benchmark

import spanbreaker


@contextmanager
def redis_server(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server not found: run `make redis-server` or pass --url")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory() as directory:
        process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                    "--appendonly", "no", "--dir", directory], stdout=subprocess.DEVNULL)
        try:
            import redis

            client = redis.Redis(port=port, socket_timeout=1)
            for _ in range(200):
                try:
                    client.ping()
                    break
                except redis.RedisError:
                    time.sleep(0.02)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.kill()
            process.wait()


def _provider(state: str | None, mode: str) -> tuple[TracerProvider, spanbreaker.BreakerSpanProcessor | None]:
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    processor = None
    if mode != "bare":
        processor = spanbreaker.BreakerSpanProcessor(state=state if mode == "redis" else None, **BUDGETS)
        provider.add_span_processor(processor)
    return provider, processor


def cost(url: str, rounds: int, runs: int) -> None:
    best: dict[str, float] = {}
    errors = 0
    modes = ["bare", "memory", "redis"]
    for number in range(rounds):
        for mode in modes[number % 3:] + modes[:number % 3]:  # rotate the order: no mode always runs warm
            provider, processor = _provider(url, mode)
            value = per_span_ns(provider, runs)
            if processor is not None:
                assert processor.stats.trips == 0, "the healthy workload must not trip"
                if processor.shared is not None:
                    processor.shared.flush()
                    errors += processor.stats.state_errors
                processor.shutdown()
            best[mode] = min(best.get(mode, float("inf")), value)
    bare, memory, shared = best["bare"], best["memory"], best["redis"]
    print(f"per span, steps 5-9 of {runs} short runs, best of {rounds} interleaved rounds (Redis errors: {errors})")
    print(f"  bare SDK span        {bare / 1000:8.1f} us")
    print(f"  breaker, in memory   {memory / 1000:8.1f} us   {memory / bare:5.2f}x bare")
    print(f"  breaker, Redis       {shared / 1000:8.1f} us   {shared / bare:5.2f}x bare   "
          f"{shared / memory:5.2f}x in memory")


def overrun(url: str, staleness: float, interval: float, budget: int, processes: int = 2) -> tuple[int, int]:
    """Model calls admitted in one trace shared by ``processes`` breakers before it tripped, and the overrun."""
    trace_id = int.from_bytes(os.urandom(16), "big") | 1
    parent = otel_trace.set_span_in_context(
        NonRecordingSpan(SpanContext(trace_id, 0xABC, is_remote=True, trace_flags=TraceFlags(1))))
    admitted = [0] * processes
    keep = {"call_budget"}
    disabled = frozenset(spanbreaker.config.DETECTOR_IDS - keep)
    start = threading.Barrier(processes)

    def worker(index: int) -> None:
        processor = spanbreaker.BreakerSpanProcessor(state=url, state_staleness_s=staleness, max_model_calls=budget,
                                                     disabled_detectors=disabled, state_prefix="bench")
        provider = TracerProvider()
        provider.add_span_processor(processor)
        tracer = provider.get_tracer(SCOPE)
        token = otel_context.attach(parent)
        try:
            with tracer.start_as_current_span("worker.run", attributes={"openinference.span.kind": "AGENT"}):
                start.wait()
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    with tracer.start_as_current_span("Model.generate", attributes={
                            "openinference.span.kind": "LLM", "llm.model_name": "scripted"}):
                        admitted[index] += 1
                    time.sleep(interval)
        except spanbreaker.Tripped:
            pass
        finally:
            otel_context.detach(token)
            processor.shutdown()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(processes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    total = sum(admitted)
    return total, total - budget


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=200, help="short runs per round")
    parser.add_argument("--url", help="an existing Redis (default: start redis-server on loopback)")
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}")
    with redis_server(args.url) as url:
        cost(url, args.rounds, args.runs)
        print("worst-case overrun: 2 breakers share a trace, max_model_calls=100, default staleness 0.25 s")
        print(f"  {'call interval':>14}{'calls/window':>14}{'admitted':>10}{'overrun':>9}")
        for interval in (0.1, 0.02, 0.005):
            total, over = overrun(url, 0.25, interval, 100)
            print(f"  {interval * 1000:>11.0f} ms{0.25 / interval:>14.0f}{total:>10}{over:>9}")


if __name__ == "__main__":
    main()
