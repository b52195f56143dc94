"""BeeAI failure modes: model calls before spanbreaker trips, against what ``max_iterations`` alone allows.

Runs every trip scenario of ``tests/beeai/scenarios.py`` (real ReActAgent, ToolCallingAgent and RequirementAgent
with a scripted model; real OpenInference spans; default thresholds except where the table says) and its
healthy look-alike, and prints a Markdown table. Offline; about a minute. ``--overhead`` instead prints the CPU
cost of a healthy run bare, with the stock OpenInference instrumentor, and with spanbreaker.

    .venv/bin/python benchmarks/beeai_scenarios.py
    .venv/bin/python benchmarks/beeai_scenarios.py --overhead
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from opentelemetry.sdk.trace import SpanLimits, TracerProvider

import spanbreaker
import spanbreaker.instrumentation
from tests.beeai import scenarios

Runner = Callable[[str, bool, TracerProvider], Awaitable[scenarios.Outcome]]

SCENARIOS: list[tuple[str, Runner, dict[str, Any], str]] = [
    ("tool observation fixation", lambda k, h, p: scenarios.fixation(k, h), {}, "defaults"),
    ("ReAct echo loop", lambda k, h, p: scenarios.echo_loop(k, h), {}, "defaults"),
    ("tool retry storm (retries=5)", lambda k, h, p: scenarios.retry_storm(k, h), {}, "defaults"),
    ("UnconstrainedMemory inflation", lambda k, h, p: scenarios.memory_inflation(k, h, p),
     {"max_prompt_tokens": 12_000}, "max_prompt_tokens=12000"),
    ("nested agents (handoff)", lambda k, h, p: scenarios.nested(k, h), {"max_model_calls": 40},
     "max_model_calls=40"),
    ("Workflow revision loop", lambda k, h, p: scenarios.workflow_revision_loop(k, h), {}, "defaults"),
    ("AgentWorkflow fixation", lambda k, h, p: scenarios.agent_workflow(k, h), {}, "defaults"),
]
KINDS = {"AgentWorkflow fixation": scenarios.AGENT_WORKFLOW_KINDS}
"""Scenarios that run only some agent classes (AgentWorkflow clones its agents; a ReActAgent cannot be)."""
ALLOWED_NOTE = {
    "tool observation fixation": "max_iterations=30",
    "ReAct echo loop": "max_iterations=30",
    "tool retry storm (retries=5)": "max_iterations=30",
    "UnconstrainedMemory inflation": "12 turns, no cap across turns",
    "nested agents (handoff)": "30 x (1 + nested default)",
    "Workflow revision loop": f"{scenarios.WORKFLOW_ROUNDS} review rounds, then the writer",
    "AgentWorkflow fixation": "AgentWorkflow runs each agent with max_iterations=20",
}


def measure(runner: Runner, kind: str, healthy: bool, config: dict[str, Any]) -> scenarios.Outcome:
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    spanbreaker.instrument(tracer_provider=provider, config=spanbreaker.BreakerConfig(**config))
    try:
        return asyncio.run(runner(kind, healthy, provider))
    finally:
        spanbreaker.instrumentation.uninstrument()
        provider.shutdown()


def overhead(runs: int = 5) -> None:
    """CPU per healthy run (RequirementAgent, 21 model calls, 20 tool calls): bare, stock instrumentor, spanbreaker."""
    from openinference.instrumentation.beeai import BeeAIInstrumentor

    def cpu_ms() -> float:
        asyncio.run(scenarios.echo_loop("requirement", healthy=True))  # warm-up
        started = time.process_time()
        for _ in range(runs):
            asyncio.run(scenarios.echo_loop("requirement", healthy=True))
        return (time.process_time() - started) * 1000 / runs

    bare = cpu_ms()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    stock = BeeAIInstrumentor()
    stock.instrument(tracer_provider=provider)
    stocked = cpu_ms()
    stock.uninstrument()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    spanbreaker.instrument(tracer_provider=provider)
    live = cpu_ms()
    spanbreaker.instrumentation.uninstrument()
    print(f"\nCPU per healthy run (RequirementAgent, 21 model + 20 tool calls, mean of {runs}):")
    print(f"  no instrumentation: {bare:.0f} ms; stock OpenInference BeeAI instrumentor (spans after the run): "
          f"{stocked:.0f} ms; spanbreaker live spans + breaker: {live:.0f} ms")


def main() -> None:
    warnings.simplefilter("ignore")
    if "--overhead" in sys.argv:
        overhead()
        return
    started = time.perf_counter()
    print("| scenario | agent | detector | model calls before trip | max_iterations alone allows | "
          "healthy look-alike | config |")
    print("|---|---|---|---|---|---|---|")
    for name, runner, config, label in SCENARIOS:
        for kind in KINDS.get(name, scenarios.AGENT_KINDS):
            bad = measure(runner, kind, False, config)
            good = measure(runner, kind, True, config)
            detector = bad.trip.detector if bad.trip else "(no trip)"
            extra = f" ({bad.extra['attempts']} tool attempts)" if "attempts" in bad.extra else ""
            quiet = "quiet" if good.trip is None else f"TRIPPED {good.trip.detector}"
            print(f"| {name} | {kind} | {detector} | {bad.model_calls}{extra} | {bad.allowed} "
                  f"({ALLOWED_NOTE[name]}) | {quiet}, {good.model_calls} calls | {label} |")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
