"""Memory the breaker holds: per live trace, and what is left after a million traces have come and gone.

The processor is fed directly (``on_start`` / ``on_end``) with light span objects shaped like the SDK's, so the
figures are the processor's own, not the SDK's span objects, and a million traces take about a minute.
``tracemalloc`` counts the Python allocations still reachable after a full garbage collection while traces are
live; the long churn runs without it (it would slow every allocation) and counts the interpreter's allocated
memory blocks instead, before and after.

    python benchmarks/memory.py [--traces 1000000] [--abandoned 1000]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags

import spanbreaker

_OK = Status(StatusCode.UNSET)


@dataclass
class LightSpan:
    """The attributes of an SDK span the processor reads (a replayed span takes the same path)."""

    context: SpanContext
    parent: SpanContext | None
    name: str
    attributes: dict[str, Any]
    events: tuple[Any, ...] = ()
    status: Status = field(default=_OK)

    def is_recording(self) -> bool:
        return False


def _context(trace_id: int, span_id: int) -> SpanContext:
    return SpanContext(trace_id, span_id, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))


class Workload:
    """Builds traces: an agent root, then steps of (model call, tool call with fresh arguments)."""

    def __init__(self, processor: spanbreaker.BreakerSpanProcessor) -> None:
        self.processor = processor
        self.next_span = 1

    def _span(self, trace_id: int, parent: SpanContext | None, name: str, attributes: dict[str, Any]) -> LightSpan:
        self.next_span += 1
        span = LightSpan(_context(trace_id, self.next_span), parent, name, attributes)
        self.processor.on_start(span)  # type: ignore[arg-type]
        return span

    def open_root(self, trace_id: int) -> LightSpan:
        return self._span(trace_id, None, "CodeAgent.run", {"openinference.span.kind": "AGENT",
                                                             "input.value": f"task {trace_id}"})

    def step(self, root: LightSpan, number: int) -> None:
        trace_id = root.context.trace_id
        step = self._span(trace_id, root.context, f"Step {number}", {"openinference.span.kind": "CHAIN"})
        llm = self._span(trace_id, step.context, "Model.generate", {
            "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "input.value": "x" * 400})
        llm.attributes.update({"llm.token_count.prompt": 1000, "llm.token_count.completion": 50})
        self.processor.on_end(llm)  # type: ignore[arg-type]
        tool = self._span(trace_id, step.context, "SearchTool", {
            "openinference.span.kind": "TOOL", "tool.name": "search",
            "input.value": json.dumps({"kwargs": {"query": f"topic {trace_id} part {number}"}})})
        tool.attributes["output.value"] = f"result {number} of trace {trace_id}: " + "facts " * 20
        self.processor.on_end(tool)  # type: ignore[arg-type]
        self.processor.on_end(step)  # type: ignore[arg-type]

    def end(self, root: LightSpan) -> None:
        self.processor.on_end(root)  # type: ignore[arg-type]


def allocated() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def _retained_per_trace(run: Any, traces: int) -> float:
    """Bytes still allocated after ``run(traces)`` and a full collection, per trace (after a warm-up run)."""
    run(10)
    gc.collect()
    tracemalloc.start()
    before = allocated()
    run(traces)
    retained = allocated() - before
    tracemalloc.stop()
    return retained / traces


def sdk_cases(traces: int) -> tuple[float, float]:
    """Through the real SDK: (bytes per abandoned trace with 200 KB prompts, bytes per ended trace whose
    session id and step name are 1 MiB each)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import set_span_in_context

    # Each abandoned trace: an agent root with a short task, a step, a model call with a 200 KB prompt; none
    # ends, the application drops them all.
    def tracer(**overrides: Any) -> Any:
        provider = TracerProvider()
        provider.add_span_processor(spanbreaker.BreakerSpanProcessor(**overrides))
        return provider.get_tracer("benchmark")

    abandoning = tracer(max_model_calls=10**9, max_tool_calls=10**9, max_traces=10 * traces + 100)
    counter = iter(range(10**9))

    def abandon(n: int) -> None:
        for _ in range(n):
            i = next(counter)
            root = abandoning.start_span("CodeAgent.run", attributes={
                "openinference.span.kind": "AGENT", "input.value": f"task {i}"})
            step = abandoning.start_span("Step 1", context=set_span_in_context(root),
                                         attributes={"openinference.span.kind": "CHAIN"})
            abandoning.start_span("Model.generate", context=set_span_in_context(step), attributes={
                "openinference.span.kind": "LLM", "input.value": f"{i} " + "p" * 200_000})

    tripping = tracer(max_model_calls=1)

    def long_values(n: int) -> None:
        for _ in range(n):
            i = next(counter)
            root = tripping.start_span("CodeAgent.run", attributes={
                "openinference.span.kind": "AGENT", "session.id": f"{i}" + "s" * 2**20,
                "spanbreaker.validation_failed": True})
            step = tripping.start_span(f"{i}" + "n" * 2**20, context=set_span_in_context(root),
                                       attributes={"openinference.span.kind": "CHAIN"})
            for _ in range(2):
                with contextlib.suppress(spanbreaker.Tripped):
                    tripping.start_span("Model.generate", context=set_span_in_context(step),
                                        attributes={"openinference.span.kind": "LLM"}).end()
            step.end()
            root.end()

    return _retained_per_trace(abandon, traces), _retained_per_trace(long_values, traces)


class NoBreaker:
    """The workload's spans without a processor: the baseline of the GC case."""

    def on_start(self, span: Any) -> None:
        pass

    def on_end(self, span: Any) -> None:
        pass


def _full_collection(rounds: int = 5) -> float:
    """The median CPU time of a full collection."""
    times = []
    for _ in range(rounds):
        started = time.process_time()
        gc.collect()
        times.append(time.process_time() - started)
    return sorted(times)[rounds // 2]


def gc_case(traces: int) -> tuple[float, float, float]:
    """(GC-tracked objects the breaker adds per live trace of 20 steps, a full collection's CPU time with
    ``traces`` such traces live, the same without the breaker)."""
    results = []
    for processor in (NoBreaker(), spanbreaker.BreakerSpanProcessor(max_model_calls=10**9, max_tool_calls=10**9)):
        workload = Workload(processor)  # type: ignore[arg-type]
        gc.collect()
        before = len(gc.get_objects())
        roots = [workload.open_root(200_000_000 + i) for i in range(traces)]
        for root in roots:
            for number in range(20):
                workload.step(root, number)
        gc.collect()
        results.append((len(gc.get_objects()) - before, _full_collection()))
        for root in roots:
            workload.end(root)
        del roots
    (alone_objects, alone_pause), (objects, pause) = results
    return (objects - alone_objects) / traces, pause, alone_pause


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=1_000_000, help="traces that come and go")
    parser.add_argument("--live", type=int, default=1_000, help="traces held open at once")
    parser.add_argument("--gc-traces", type=int, default=10_000, help="live traces for the GC case")
    parser.add_argument("--abandoned", type=int, default=1_000, help="abandoned and long-value traces")
    args = parser.parse_args()

    processor = spanbreaker.BreakerSpanProcessor(max_model_calls=10**9, max_tool_calls=10**9, max_tokens=10**12,
                                                 max_cost_usd=1e12)
    workload = Workload(processor)
    warm = workload.open_root(1)  # imports, caches and the price table load before counting
    workload.step(warm, 0)
    workload.end(warm)
    time.sleep(1.0)  # let the background price-table import finish before the baseline
    tracemalloc.start()
    baseline = allocated()
    per_trace: list[tuple[int, float]] = []
    for live_traces, steps in ((args.live, 20), (max(1, args.live // 100), 2_000), (1, 20_000)):
        # Counted from just before these traces start: what an earlier round left (trip records, a table grown
        # for 1,000 traces) is not this round's traces' memory.
        before = allocated()
        roots = [workload.open_root(workload.next_span + i) for i in range(live_traces)]
        for root in roots:
            for number in range(steps):
                workload.step(root, number)
        per_trace.append((steps, (allocated() - before) / live_traces))
        for root in roots:
            workload.end(root)
        del roots
    after_live = allocated() - baseline
    never_ended = [workload.open_root(50_000_000 + i) for i in range(processor.config.max_traces * 2)]
    del never_ended
    capped = allocated() - baseline
    tracemalloc.stop()
    abandoned, long_values = sdk_cases(args.abandoned)
    gc_objects, pause, pause_alone = gc_case(args.gc_traces)

    gc.collect()
    blocks_before = sys.getallocatedblocks()
    started = time.perf_counter()
    for trace_id in range(100_000_000, 100_000_000 + args.traces):
        root = workload.open_root(trace_id)
        workload.step(root, 0)
        workload.end(root)
    elapsed = time.perf_counter() - started
    gc.collect()
    blocks_after = sys.getallocatedblocks()

    for steps, size in per_trace:
        print(f"memory per live trace with {steps:,} steps of history: {size / 1024:.1f} KiB")
    print(f"retained after those traces ended: {after_live / 1024:.1f} KiB")
    print(f"{processor.config.max_traces * 2:,} roots that never end (LRU cap {processor.config.max_traces:,}):"
          f" the processor holds {capped / 1024 / 1024:.1f} MiB, {processor.stats.traces_evicted:,} traces evicted")
    print(f"{args.abandoned:,} abandoned traces with 200 KB prompts (real SDK, spans dropped unended):"
          f" {abandoned / 1024:.1f} KiB retained per trace")
    print(f"{args.abandoned:,} traces with a 1 MiB session.id and a 1 MiB step name, tripped and ended:"
          f" {long_values / 1024:.1f} KiB retained per trace")
    print(f"{args.gc_traces:,} live traces of 20 steps: {gc_objects:.1f} GC-tracked objects per trace held by the"
          f" breaker; a full collection takes {pause * 1000:.0f} ms (CPU), {pause_alone * 1000:.0f} ms with the"
          f" same spans and no breaker")
    print(f"{args.traces:,} more traces came and went: {blocks_after - blocks_before:+,} memory blocks retained"
          f" ({args.traces * 4 / elapsed:,.0f} spans/s through the processor)")


if __name__ == "__main__":
    main()
