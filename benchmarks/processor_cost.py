"""Per-span cost of the BreakerSpanProcessor, as a ratio to the bare SDK span cost measured in the same run.

A healthy agent run is simulated with OpenInference-shaped spans (an agent span, then per step a ``Step N`` CHAIN
span holding one LLM span and one TOOL span with fresh arguments and a fresh result), through a real SDK
``TracerProvider``. Two shapes: ``minimal`` spans carry only what the breaker reads (the worst case for the
ratio: the cheapest spans an instrumentor could make); ``smolagents`` spans carry every attribute the
OpenInference smolagents instrumentor sets (as in the reference dump ``spans_tca_keyerror_FULLATTRS.txt``:
message history, tool schemas, output messages, mime types).

The same workload runs on a provider without processors (the baseline) and on one with the breaker, interleaved
(see :func:`paired`), by wall clock and by CPU time (``time.process_time``: only this process's time on the core,
the figure to trust on a shared machine). The load average is printed before and after.

Two points of a run are measured: early (steps 5..) over many short runs, and late (steps 5,000..) in one long run,
to show the cost per span does not grow with the length of the run. A third line, "hooks alone", feeds the SDK
spans of the early workload, recorded once, to a fresh breaker's ``on_start`` / ``on_end`` with no SDK work in
between: the breaker's own work, which the in-run figure exceeds by what running between the SDK's calls costs
(its code and data, evicted from the CPU's caches by the SDK's work, fetched again). The line after it times the
same hook calls with a sweep over a megabyte of objects before each (caches cold on purpose). With ``--by-kind``,
the hooks-alone cost per span kind and hook.

    python benchmarks/processor_cost.py [--rounds 7] [--shape minimal|smolagents] [--by-kind] [--prompt-kib N]
        [--skip-kind CHAIN]

``--skip-kind`` lets one kind's spans pass the breaker unseen in the run (an ablation bound: what the rest costs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import SpanLimits, SpanProcessor, TracerProvider

import spanbreaker

SCOPE = "openinference.instrumentation.smolagents"
PROMPT = json.dumps([{"role": "user", "content": "Investigate the failing test and fix the bug. " * 40}])


def long_prompt(kib: int) -> str:
    """A model call's messages of about ``kib`` KiB (the task, then tool observations), as a real run's prompt grows
    to: the breaker's work per span must not grow with it."""
    messages = [{"role": "user", "content": "Investigate the failing test and fix the bug. " * 40}]
    while len(json.dumps(messages)) < kib * 1024:
        n = len(messages)
        messages.append({"role": "assistant" if n % 2 else "user",
                         "content": f"Observation {n}:\n" + f"line {n}: def handler_{n}(request): return None\n" * 40})
    return json.dumps(messages)
BUDGETS = dict(max_model_calls=10_000_000, max_tool_calls=10_000_000, max_tokens=10**12, max_cost_usd=10**9,
               context_jump_tokens=10**9, max_prompt_tokens=10**9)


SKIP_KIND: str | None = None
"""``--skip-kind``: spans of this OpenInference kind bypass the breaker (an ablation bound, never a configuration)."""


class _Skipping(spanbreaker.BreakerSpanProcessor):
    """The breaker with the spans of :data:`SKIP_KIND` passed by unseen: what the rest of the breaker costs in the
    run, so the share of one kind's spans is the difference to the full breaker's figure."""

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        if span._attributes._dict.get("openinference.span.kind") != SKIP_KIND:
            super().on_start(span, parent_context)

    def on_end(self, span: Any) -> None:
        if span._attributes._dict.get("openinference.span.kind") != SKIP_KIND:
            super().on_end(span)


def _breaker() -> spanbreaker.BreakerSpanProcessor:
    return (_Skipping if SKIP_KIND else spanbreaker.BreakerSpanProcessor)(**BUDGETS)


def _provider(with_breaker: bool) -> tuple[TracerProvider, spanbreaker.BreakerSpanProcessor | None]:
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    processor = None
    if with_breaker:
        processor = _breaker()
        provider.add_span_processor(processor)
    return provider, processor


def _step(tracer: Any, number: int) -> None:
    """One healthy step: a model call, then a tool call with new arguments and a new result (3 spans)."""
    with tracer.start_as_current_span(f"Step {number}", attributes={"openinference.span.kind": "CHAIN"}):
        with tracer.start_as_current_span("OpenAIServerModel.generate", attributes={
                "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "input.value": PROMPT}) as llm:
            llm.set_attribute("llm.token_count.prompt", 1200)
            llm.set_attribute("llm.token_count.completion", 80)
            llm.set_attribute("llm.token_count.total", 1280)
            llm.set_attribute("output.value", f"Thought: look at file {number}")
        arguments = json.dumps({"args": [], "sanitize_inputs_outputs": True,
                                "kwargs": {"command": f"sed -n '{number},{number + 40}p' src/module_{number}.py"}})
        with tracer.start_as_current_span("BashTool", attributes={
                "openinference.span.kind": "TOOL", "tool.name": "bash", "input.value": arguments}) as tool:
            tool.set_attribute("output.value", f"line {number}: def handler_{number}(request):\n    return None\n" * 8)


TOOL_SCHEMA = json.dumps({"type": "function", "function": {"name": "bash", "description": "Runs a shell command.",
                          "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}})
HISTORY_MESSAGES = 8
"""Messages of history on an LLM span (the instrumentor writes three attributes per message)."""


def _step_smolagents(tracer: Any, number: int) -> None:
    """The same step with the attributes the OpenInference smolagents instrumentor sets (3 spans)."""
    with tracer.start_as_current_span(f"Step {number}", attributes={
            "openinference.span.kind": "CHAIN",
            "input.value": json.dumps({"memory_step": f"ActionStep(step_number={number}, timing=Timing(start_time="
                                                      f"1795359273.97, end_time=None, duration=None), "
                                                      "model_input_messages=None, tool_calls=None)"})}) as step:
        messages: dict[str, Any] = {}
        for index in range(min(HISTORY_MESSAGES, 2 + 2 * number)):
            prefix = f"llm.input_messages.{index}.message"
            messages[f"{prefix}.role"] = "user" if index % 2 else "assistant"
            messages[f"{prefix}.contents.0.message_content.type"] = "text"
            messages[f"{prefix}.contents.0.message_content.text"] = f"Observation {index}: see module_{index}.py"
        with tracer.start_as_current_span("OpenAIServerModel.generate", attributes={
                "openinference.span.kind": "LLM", "input.mime_type": "application/json", "input.value": PROMPT,
                "llm.invocation_parameters": "{}", "llm.model_name": "gpt-4o-mini", **messages}) as llm:
            llm.set_attribute("llm.token_count.prompt", 1200)
            llm.set_attribute("llm.token_count.completion", 80)
            llm.set_attribute("llm.token_count.total", 1280)
            llm.set_attribute("llm.output_messages.0.message.role", "assistant")
            llm.set_attribute("llm.output_messages.0.message.tool_calls.0.tool_call.id", f"call_{number}")
            llm.set_attribute("llm.output_messages.0.message.tool_calls.0.tool_call.function.name", "bash")
            llm.set_attribute("llm.tools.0.tool.json_schema", TOOL_SCHEMA)
            llm.set_attribute("llm.tools.1.tool.json_schema", TOOL_SCHEMA)
            llm.set_attribute("output.mime_type", "application/json")
            llm.set_attribute("output.value", f"Thought: look at file {number}")
        arguments = json.dumps({"args": [], "sanitize_inputs_outputs": True,
                                "kwargs": {"command": f"sed -n '{number},{number + 40}p' src/module_{number}.py"}})
        with tracer.start_as_current_span("BashTool", attributes={
                "openinference.span.kind": "TOOL", "input.value": arguments, "tool.name": "bash",
                "tool.description": "Runs a shell command.",
                "tool.parameters": '{"command": {"type": "string", "description": "the command"}}'}) as tool:
            tool.set_attribute("output.value", f"line {number}: def handler_{number}(request):\n    return None\n" * 8)
        step.set_attribute("output.value", "None")


STEPS = {"minimal": _step, "smolagents": _step_smolagents}
SPANS_PER_STEP = 3


def early(provider: TracerProvider, runs: int, shape: str = "minimal") -> float:
    """Nanoseconds (wall clock) per span over steps 5..9 of many short runs (each run its own trace)."""
    return early_cost(provider, runs, shape)[0]


def early_cost(provider: TracerProvider, runs: int, shape: str = "minimal") -> tuple[float, float]:
    """(wall, CPU) nanoseconds per span over steps 5..9 of many short runs (each run its own trace)."""
    tracer = provider.get_tracer(SCOPE)
    _step = STEPS[shape]
    wall = cpu = 0
    for run in range(runs):
        with tracer.start_as_current_span("CodeAgent.run", attributes={"openinference.span.kind": "AGENT",
                                                                        "input.value": f"task {run}"}):
            for number in range(5):
                _step(tracer, number)
            start, start_cpu = time.perf_counter_ns(), time.process_time_ns()
            for number in range(5, 10):
                _step(tracer, number)
            cpu += time.process_time_ns() - start_cpu
            wall += time.perf_counter_ns() - start
    spans = runs * 5 * SPANS_PER_STEP
    return wall / spans, cpu / spans


class Traces:
    """Short healthy runs on one provider, one at a time: :meth:`next` runs one and returns the (wall, CPU)
    nanoseconds its steps 5..9 took."""

    def __init__(self, provider: TracerProvider, shape: str) -> None:
        self.tracer = provider.get_tracer(SCOPE)
        self.step = STEPS[shape]
        self.run = 0

    def next(self) -> tuple[int, int]:
        self.run += 1
        with self.tracer.start_as_current_span("CodeAgent.run", attributes={
                "openinference.span.kind": "AGENT", "input.value": f"task {self.run}"}):
            for number in range(5):
                self.step(self.tracer, number)
            start, start_cpu = time.perf_counter_ns(), time.process_time_ns()
            for number in range(5, 10):
                self.step(self.tracer, number)
            cpu = time.process_time_ns() - start_cpu
            wall = time.perf_counter_ns() - start
        return wall, cpu


class LongRun:
    """One long healthy run on one provider, a step at a time: :meth:`next` runs one step and returns the (wall,
    CPU) nanoseconds it took. The run's agent span stays open between calls (another provider's steps run in
    between)."""

    def __init__(self, provider: TracerProvider, shape: str, warm_steps: int) -> None:
        self.tracer = provider.get_tracer(SCOPE)
        self.step = STEPS[shape]
        self.agent = self.tracer.start_span("CodeAgent.run", attributes={"openinference.span.kind": "AGENT",
                                                                         "input.value": "long task"})
        self.number = 0
        for _ in range(warm_steps):
            self.next()

    def next(self) -> tuple[int, int]:
        with trace.use_span(self.agent, end_on_exit=False):
            start, start_cpu = time.perf_counter_ns(), time.process_time_ns()
            self.step(self.tracer, self.number)
            cpu = time.process_time_ns() - start_cpu
            wall = time.perf_counter_ns() - start
        self.number += 1
        return wall, cpu

    def close(self) -> None:
        self.agent.end()


def paired(rounds: int, blocks: int, make: Callable[[bool], Any], spans_per_block: int
           ) -> list[tuple[float, float, float, float, float]]:
    """Bare SDK and breaker interleaved block by block (a block: one short run, or one step of a long run), the
    side going first alternating, so both see the same machine: a core that slows down for a second (frequency,
    a neighbour, the other core's cache traffic) slows both sides alike, and the ratio of their sums keeps its
    value while either sum alone would move. Per round, the ratio of the two sums; over the rounds, the median
    and the spread.

    Returns [wall, CPU]: (bare ns per span, breaker ns per span, median ratio, lowest ratio, highest ratio)."""
    ratios: list[list[float]] = [[], []]
    totals = [[0, 0], [0, 0]]  # [clock][side]
    for _ in range(rounds):
        sides = [make(False), make(True)]
        sums = [[0, 0], [0, 0]]
        for block in range(blocks):
            for side in ((0, 1) if block % 2 == 0 else (1, 0)):
                wall, cpu = sides[side].next()
                sums[0][side] += wall
                sums[1][side] += cpu
        for side in sides:
            if hasattr(side, "close"):
                side.close()
        for clock in (0, 1):
            ratios[clock].append(sums[clock][1] / sums[clock][0] - 1)
            totals[clock][0] += sums[clock][0]
            totals[clock][1] += sums[clock][1]
    spans = rounds * blocks * spans_per_block
    return [(totals[c][0] / spans, totals[c][1] / spans, statistics.median(ratios[c]), min(ratios[c]),
             max(ratios[c])) for c in (0, 1)]


class _Recorder(SpanProcessor):
    """Keeps every hook call the SDK makes, in order: (True for on_end, the span)."""

    def __init__(self) -> None:
        self.calls: list[tuple[bool, Any]] = []

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.calls.append((False, span))

    def on_end(self, span: Any) -> None:
        self.calls.append((True, span))


SWEEP_OBJECTS = 3000
"""Objects a cold-cache sweep reads between two hook calls (a stand-in for the SDK's work between them: about a
megabyte of dicts and strings, so the breaker's code and data have left the CPU's caches when its hook runs)."""


class _Sweep:
    """Reads a fresh slice of a large pool of objects each call: evicts what the last hook call left in the caches."""

    def __init__(self) -> None:
        self.pool = [{"a": index, "b": str(index)} for index in range(20 * SWEEP_OBJECTS)]
        self.offset = 0

    def __call__(self) -> int:
        self.offset = (self.offset + 3 * SWEEP_OBJECTS + 1) % (len(self.pool) - SWEEP_OBJECTS)
        return sum(item["a"] for item in self.pool[self.offset:self.offset + SWEEP_OBJECTS])


def hooks_alone(rounds: int, runs: int, shape: str) -> tuple[float, float, dict[tuple[str, str], float]]:
    """The breaker's hooks fed recorded spans, a fresh breaker each round, medians over rounds: (CPU nanoseconds
    per span; wall nanoseconds per span in the hook calls alone, a cold-cache sweep run before each; wall
    nanoseconds per hook call by (span kind, hook))."""
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    recorder = _Recorder()
    provider.add_span_processor(recorder)
    early_cost(provider, runs, shape)
    calls = recorder.calls
    kinds = [(str(span.attributes.get("openinference.span.kind")), "on_end" if ended else "on_start")
             for ended, span in calls]
    per_span: list[float] = []
    cold: list[float] = []
    by_kind: dict[tuple[str, str], list[float]] = {}
    sweep = _Sweep()
    for _ in range(rounds):
        processor = _breaker()
        start, end = processor.on_start, processor.on_end
        began = time.process_time_ns()
        for ended, span in calls:
            if ended:
                end(span)
            else:
                start(span)
        per_span.append((time.process_time_ns() - began) / (len(calls) / 2))
        sums: dict[tuple[str, str], list[int]] = {}
        for key, took in zip(kinds, _timed_calls(calls), strict=True):
            entry = sums.setdefault(key, [0, 0])
            entry[0] += took
            entry[1] += 1
        for key, (total, count) in sums.items():
            by_kind.setdefault(key, []).append(total / count)
        cold.append(sum(_timed_calls(calls, sweep)) / (len(calls) / 2))
    return (statistics.median(per_span), statistics.median(cold),
            {key: statistics.median(values) for key, values in by_kind.items()})


def _timed_calls(calls: list[tuple[bool, Any]], before: Callable[[], object] | None = None) -> list[int]:
    """Wall nanoseconds of each hook call of a fresh breaker fed ``calls`` (the clock's own cost in); ``before``
    runs untimed before each call."""
    processor = _breaker()
    start, end = processor.on_start, processor.on_end
    clock = time.perf_counter_ns
    took: list[int] = []
    for ended, span in calls:
        if before is not None:
            before()
        began = clock()
        if ended:
            end(span)
        else:
            start(span)
        took.append(clock() - began)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--runs", type=int, default=400, help="short runs per round and side (early point)")
    parser.add_argument("--late-step", type=int, default=5000)
    parser.add_argument("--shape", choices=sorted(STEPS), default="minimal",
                        help="span attributes: only what the breaker reads, or all the smolagents instrumentor sets")
    parser.add_argument("--by-kind", action="store_true", help="the hooks-alone cost per span kind and hook too")
    parser.add_argument("--prompt-kib", type=int, default=0,
                        help="each model call's messages this large (default: one 2 KiB message)")
    parser.add_argument("--skip-kind", choices=("AGENT", "CHAIN", "LLM", "TOOL"),
                        help="spans of this kind bypass the breaker in the run (how much of the cost is theirs)")
    args = parser.parse_args()
    global PROMPT, SKIP_KIND
    SKIP_KIND = args.skip_kind
    if args.prompt_kib:
        PROMPT = long_prompt(args.prompt_kib)
    processors: list[spanbreaker.BreakerSpanProcessor] = []

    def provider(with_breaker: bool) -> TracerProvider:
        made, processor = _provider(with_breaker)
        if processor is not None:
            processors.append(processor)
        return made

    def early_side(with_breaker: bool) -> Traces:
        return Traces(provider(with_breaker), args.shape)

    def late_side(with_breaker: bool) -> LongRun:
        return LongRun(provider(with_breaker), args.shape, args.late_step)

    print(f"python {platform.python_version()} on {platform.machine()}, {args.shape} spans, prompts of "
          f"{len(PROMPT) / 1024:.0f} KiB, {args.rounds} rounds of "
          f"bare SDK and breaker interleaved run by run (early) or step by step (late); load average {_load()} at "
          "the start")
    print(f"{'point of the run':<22}{'clock':>6}{'bare SDK span':>16}{'with breaker':>16}{'added':>12}"
          f"{'ratio (median)':>16}{'rounds':>16}")
    early_bare = 0.0
    for label, make, blocks, spans in ((f"steps 5-9 ({args.runs} runs)", early_side, args.runs, 5 * SPANS_PER_STEP),
                                       (f"steps {args.late_step}-{args.late_step + 499}", late_side, 500,
                                        SPANS_PER_STEP)):
        for clock, (bare, breaker, median, low, high) in zip(("wall", "CPU"),
                                                             paired(args.rounds, blocks, make, spans), strict=True):
            print(f"{label:<22}{clock:>6}{bare / 1000:>13.1f} us{breaker / 1000:>13.1f} us"
                  f"{(breaker - bare) / 1000:>9.1f} us{median:>15.2f}x{f'{low:.2f}-{high:.2f}x':>16}")
            if clock == "CPU" and not early_bare:
                early_bare = bare
    alone, cold, by_kind = hooks_alone(args.rounds, args.runs, args.shape)
    print(f"{'hooks alone (early)':<22}{'CPU':>6}{'':>16}{'':>16}{alone / 1000:>9.1f} us{alone / early_bare:>15.2f}x"
          f"{'(of early bare)':>16}")
    print(f"{'  same, caches cold':<22}{'wall':>6}{'':>16}{'':>16}{cold / 1000:>9.1f} us{cold / early_bare:>15.2f}x"
          f"{'(of early bare)':>16}")
    if args.by_kind:
        for (kind, hook), took in sorted(by_kind.items()):
            print(f"    {kind:<8}{hook:<10}{took / 1000:>7.2f} us a call (wall, median of rounds)")
    assert all(p.stats.trips == 0 for p in processors), "the healthy workload must not trip"
    print(f"load average {_load()} at the end (CPU time is the figure to trust on a shared machine: wall clock also "
          "counts the time other processes held the core)")


def _load() -> str:
    """The 1, 5 and 15 minute load averages, as ``uptime`` prints them."""
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
