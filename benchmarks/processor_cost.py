"""Per-span cost of the BreakerSpanProcessor, as a ratio to the bare SDK span cost measured in the same run.

A healthy agent run is simulated with OpenInference-shaped spans (an agent span, then per step a ``Step N`` CHAIN
span holding one LLM span and one TOOL span with fresh arguments and a fresh result), through a real SDK
``TracerProvider``. Two shapes: ``minimal`` spans carry only what the breaker reads (the worst case for the
ratio: the cheapest spans an instrumentor could make); ``smolagents`` spans carry every attribute the
OpenInference smolagents instrumentor sets (as in the reference dump ``spans_tca_keyerror_FULLATTRS.txt``:
message history, tool schemas, output messages, mime types).

The same workload runs on a provider without processors (the baseline) and on one with the breaker, interleaved
over several rounds; the fastest round of each is kept (the least disturbed by the machine), by wall clock and by
CPU time (``time.process_time``: only this process's time on the core, the figure to trust on a shared machine).
The load average is printed before and after.

Two points of a run are measured: early (steps 5..) over many short runs, and late (steps 5,000..) in one long run,
to show the cost per span does not grow with the length of the run.

    python benchmarks/processor_cost.py [--rounds 7] [--shape minimal|smolagents]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable
from typing import Any

from opentelemetry.sdk.trace import SpanLimits, TracerProvider

import spanbreaker

SCOPE = "openinference.instrumentation.smolagents"
PROMPT = json.dumps([{"role": "user", "content": "Investigate the failing test and fix the bug. " * 40}])
BUDGETS = dict(max_model_calls=10_000_000, max_tool_calls=10_000_000, max_tokens=10**12, max_cost_usd=10**9,
               context_jump_tokens=10**9, max_prompt_tokens=10**9)


def _provider(with_breaker: bool) -> tuple[TracerProvider, spanbreaker.BreakerSpanProcessor | None]:
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    processor = None
    if with_breaker:
        processor = spanbreaker.BreakerSpanProcessor(**BUDGETS)
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


def late(provider: TracerProvider, warm_steps: int, measured_steps: int, shape: str = "minimal") -> tuple[float, float]:
    """(wall, CPU) nanoseconds per span over ``measured_steps`` steps after ``warm_steps`` steps of one long run."""
    tracer = provider.get_tracer(SCOPE)
    _step = STEPS[shape]
    with tracer.start_as_current_span("CodeAgent.run", attributes={"openinference.span.kind": "AGENT",
                                                                    "input.value": "long task"}):
        for number in range(warm_steps):
            _step(tracer, number)
        start, start_cpu = time.perf_counter_ns(), time.process_time_ns()
        for number in range(warm_steps, warm_steps + measured_steps):
            _step(tracer, number)
        cpu = time.process_time_ns() - start_cpu
        wall = time.perf_counter_ns() - start
    spans = measured_steps * SPANS_PER_STEP
    return wall / spans, cpu / spans


def best_of(rounds: int, measure: Callable[[bool], tuple[float, float]]) -> list[tuple[float, float]]:
    """[(bare, breaker) wall, (bare, breaker) CPU]: the fastest round of each, by each clock."""
    bare, breaker = [], []
    for _ in range(rounds):
        bare.append(measure(False))
        breaker.append(measure(True))
    return [(min(b[i] for b in bare), min(b[i] for b in breaker)) for i in (0, 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--runs", type=int, default=400, help="short runs per round (early point)")
    parser.add_argument("--late-step", type=int, default=5000)
    parser.add_argument("--shape", choices=sorted(STEPS), default="minimal",
                        help="span attributes: only what the breaker reads, or all the smolagents instrumentor sets")
    args = parser.parse_args()

    def measure_early(with_breaker: bool) -> tuple[float, float]:
        provider, processor = _provider(with_breaker)
        result = early_cost(provider, args.runs, args.shape)
        assert processor is None or processor.stats.trips == 0, "the healthy workload must not trip"
        return result

    def measure_late(with_breaker: bool) -> tuple[float, float]:
        provider, processor = _provider(with_breaker)
        result = late(provider, args.late_step, 500, args.shape)
        assert processor is None or processor.stats.trips == 0, "the healthy workload must not trip"
        return result

    print(f"python {platform.python_version()} on {platform.machine()}, {args.shape} spans, "
          f"best of {args.rounds} interleaved rounds; load average {_load()} at the start")
    print(f"{'point of the run':<22}{'clock':>6}{'bare SDK span':>16}{'with breaker':>16}{'added':>12}{'ratio':>10}")
    for label, measure in ((f"steps 5-9 ({args.runs} runs)", measure_early),
                           (f"steps {args.late_step}-{args.late_step + 499}", measure_late)):
        for clock, (bare, breaker) in zip(("wall", "CPU"), best_of(args.rounds, measure), strict=True):
            added = breaker - bare
            print(f"{label:<22}{clock:>6}{bare / 1000:>13.1f} us{breaker / 1000:>13.1f} us{added / 1000:>9.1f} us"
                  f"{added / bare:>9.2f}x")
    print(f"load average {_load()} at the end (CPU time is the figure to trust on a shared machine: wall clock also "
          "counts the time other processes held the core)")


def _load() -> str:
    """The 1, 5 and 15 minute load averages, as ``uptime`` prints them."""
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
