"""What shared state on Redis costs per span, and how far a trace can overrun a budget between two flushes.

1. Per-span cost: the same healthy agent workload (per step a ``Step N`` CHAIN span with one LLM span and one TOOL
   span, OpenInference-shaped, through a real SDK ``TracerProvider``) runs on a bare provider, with the breaker
   keeping state in memory, and with the breaker sharing state on a real ``redis-server`` on loopback. Rounds are
   interleaved and the fastest of each kept. The hot path never waits on Redis, so the ratio stays near 1.
2. A loop split over processes (``--only loops``): the identical call made in turn by 2 or 3 breakers of one trace,
   each after a model call of a given latency; prints which call ``tool_repeat`` vetoed (the 5th in one process).
3. Worst-case overrun: two breakers (two processes' worth: each its own Redis client and threads) share one trace
   with ``max_model_calls``; both call the model in a loop at a given interval until the trace trips. The calls
   admitted past the budget are what the others did inside one staleness window (they see each other's spend only
   at the next flush): about (processes - 1) x staleness / interval, plus one per process.
4. Outage: the breaker's own ``redis-server`` is killed, 2,000 traces of 20 steps (``memory.py``'s workload) start
   and end, and the memory the breaker still holds for them (``tracemalloc``, after a full collection) is what an
   outage costs; the flusher thread's CPU time per cycle while Redis stays down shows whether each cycle re-sends
   the queue. Redis then restarts empty and the usage that waited must be counted exactly once.

    python benchmarks/redis_state_cost.py [--rounds 5] [--url redis://127.0.0.1:6379/0] [--only cost|loops|outage]

Without ``--url`` it starts ``redis-server`` on a free loopback port (``make redis-server`` installs it); the outage
part always starts its own (it kills it).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from memory import Workload
from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from processor_cost import BUDGETS, SCOPE
from processor_cost import early as per_span_ns  # the same healthy workload as the in-memory cost benchmark

import spanbreaker


def _spawn(directory: str, port: int) -> subprocess.Popen[bytes]:
    """A redis-server on loopback, answering PING when this returns."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server not found: run `make redis-server` or pass --url")
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no", "--dir", directory], stdout=subprocess.DEVNULL)
    import redis

    client = redis.Redis(port=port, socket_timeout=1)
    for _ in range(200):
        try:
            client.ping()
            break
        except redis.RedisError:
            time.sleep(0.02)
    return process


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def redis_server(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    port = _free_port()
    with tempfile.TemporaryDirectory() as directory:
        process = _spawn(directory, port)
        try:
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


def _remote_parent() -> otel_context.Context:
    """A new trace's remote parent: what each process of one trace gets from the request's traceparent."""
    trace_id = int.from_bytes(os.urandom(16), "big") | 1
    return otel_trace.set_span_in_context(
        NonRecordingSpan(SpanContext(trace_id, 0xABC, is_remote=True, trace_flags=TraceFlags(1))))


def _run_threads(worker: Callable[[int], None], count: int) -> None:
    """``worker(0)`` ... ``worker(count - 1)`` at once, each on its own thread (one breaker each: a process)."""
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def overrun(url: str, staleness: float, interval: float, budget: int, processes: int = 2) -> tuple[int, int]:
    """Model calls admitted in one trace shared by ``processes`` breakers before it tripped, and the overrun."""
    parent = _remote_parent()
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

    _run_threads(worker, processes)
    total = sum(admitted)
    return total, total - budget


def split_loop(url: str, staleness: float, latency: float, processes: int = 2) -> int:
    """The identical call (same arguments, same answer) made in turn by ``processes`` breakers of one trace, each
    after ``latency`` seconds of model time: the number of the call that was vetoed (5 in one process)."""
    parent = _remote_parent()
    turn = threading.Condition()
    made = [0]
    vetoed: list[int] = []

    def worker(index: int) -> None:
        processor = spanbreaker.BreakerSpanProcessor(state=url, state_staleness_s=staleness, state_prefix="bench")
        provider = TracerProvider()
        provider.add_span_processor(processor)
        tracer = provider.get_tracer(SCOPE)
        token = otel_context.attach(parent)
        try:
            with tracer.start_as_current_span("researcher.run", attributes={"openinference.span.kind": "AGENT"}):
                while made[0] < 20 and not vetoed:
                    with turn:
                        turn.wait_for(lambda: made[0] % processes == index or bool(vetoed))
                    if vetoed:
                        break
                    with tracer.start_as_current_span("Model.generate", attributes={
                            "openinference.span.kind": "LLM", "llm.model_name": "scripted"}):
                        time.sleep(latency)
                    try:
                        with tracer.start_as_current_span("search", attributes={
                                "openinference.span.kind": "TOOL", "tool.name": "search",
                                "input.value": '{"query": "why does shutdown hang"}'}) as span:
                            span.set_attribute("output.value", "Shutdown flushes the exporters first.")
                    except spanbreaker.Tripped:
                        vetoed.append(made[0] + 1)
                    with turn:
                        made[0] += 1
                        turn.notify_all()
        finally:
            otel_context.detach(token)
            processor.shutdown()

    _run_threads(worker, processes)
    return vetoed[0] if vetoed else 0


def _flusher_cpu(shared: object) -> float:
    thread = shared._flusher  # type: ignore[attr-defined]
    return time.clock_gettime(time.pthread_getcpuclockid(thread.ident))


def outage(traces: int = 2_000, steps: int = 20, down_s: float = 3.0) -> None:
    """What 2,000 traces ended while Redis is down leave behind, and what each flusher cycle costs meanwhile."""
    port = _free_port()
    with tempfile.TemporaryDirectory() as directory:
        process = _spawn(directory, port)
        processor = spanbreaker.BreakerSpanProcessor(state=f"redis://127.0.0.1:{port}/0", state_prefix="outage",
                                                     max_model_calls=10**9, max_tool_calls=10**9)
        shared = processor.shared
        workload = Workload(processor)
        warm = workload.open_root(1)
        workload.step(warm, 0)
        workload.end(warm)
        assert shared.flush(5.0)
        process.kill()
        process.wait()
        tracemalloc.start()
        gc.collect()
        baseline = tracemalloc.get_traced_memory()[0]
        for number in range(traces):
            root = workload.open_root(1_000 + number)
            for step in range(steps):
                workload.step(root, step)
            workload.end(root)
        cycles, cpu = shared.stats.errors, _flusher_cpu(shared)
        time.sleep(down_s)  # the outage goes on: the flusher cycles every state_staleness_s
        cycles, cpu = shared.stats.errors - cycles, _flusher_cpu(shared) - cpu
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - baseline
        tracemalloc.stop()
        process = _spawn(directory, port)  # back, empty
        try:
            assert shared.flush(10.0), "Redis came back but the breaker did not flush"
            import redis

            client = redis.Redis(port=port)
            pipe = client.pipeline(transaction=False)
            for number in range(traces):
                pipe.hget(f"outage:trace:{1_000 + number:032x}", "m")
            counted = sum(int(m or 0) for m in pipe.execute())
        finally:
            processor.shutdown()
            process.kill()
            process.wait()
    dropped = getattr(shared.stats, "backlog_dropped", 0)
    print(f"outage: Redis killed, {traces:,} traces of {steps} steps started and ended, then {down_s:.0f} s more down")
    print(f"  retained by the breaker       {retained / 2**20:8.2f} MiB   ({retained / traces:,.0f} bytes a trace)")
    print(f"  flusher CPU per failed cycle  {cpu / max(1, cycles) * 1e6:8.0f} us   ({cycles} cycles)")
    print(f"  model calls counted in Redis after it came back: {counted:,} of {traces * steps:,}"
          f" (dropped from a full backlog: {dropped:,} traces)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=200, help="short runs per round")
    parser.add_argument("--url", help="an existing Redis (default: start redis-server on loopback)")
    parser.add_argument("--only", choices=["cost", "overrun", "loops", "outage"], help="run one part")
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}")
    if args.only == "outage":
        outage()
        return
    with redis_server(args.url) as url:
        if args.only in (None, "cost"):
            cost(url, args.rounds, args.runs)
        if args.only in (None, "loops"):
            print("a loop split over processes: the identical call made in turn by N breakers of one trace "
                  "(tool_repeat_max 4: one process vetoes call 5), default staleness 0.25 s")
            print(f"  {'processes':>10}{'model latency':>15}{'call vetoed':>13}")
            for processes, latency in ((2, 1.0), (2, 0.3), (2, 0.05), (3, 0.3)):
                print(f"  {processes:>10}{latency * 1000:>12.0f} ms{split_loop(url, 0.25, latency, processes):>13}")
        if args.only in ("cost", "loops"):
            return
        print("worst-case overrun: 2 breakers share a trace, max_model_calls=100, default staleness 0.25 s")
        print(f"  {'call interval':>14}{'calls/window':>14}{'admitted':>10}{'overrun':>9}")
        for interval in (0.1, 0.02, 0.005):
            total, over = overrun(url, 0.25, interval, 100)
            print(f"  {interval * 1000:>11.0f} ms{0.25 / interval:>14.0f}{total:>10}{over:>9}")
    if args.only is None:
        outage()


if __name__ == "__main__":
    main()
