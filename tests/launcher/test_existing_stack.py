"""The README's "Already have a tracing stack?": ``spanbreaker.instrument(provider)`` gives the whole guarded trace
beside a stock OpenInference instrumentor; a ``BreakerSpanProcessor`` added by hand says once what is missing.

Each case is a subprocess (the stack sets the global provider and instruments smolagents for good).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

APP = Path(__file__).resolve().parent / "apps" / "existing_stack.py"


def _run(mode: str) -> tuple[list[dict[str, Any]], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "SPANBREAKER_", "LAUNCHER_APP_"))}
    env.update(LAUNCHER_APP_MAX_STEPS="8", PYTHONUNBUFFERED="1")
    done = subprocess.run([sys.executable, str(APP), mode], env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return lines, done.stderr


@pytest.fixture(scope="module")
def stacks() -> dict[str, tuple[list[dict[str, Any]], str]]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {mode: pool.submit(_run, mode) for mode in ("instrument", "processor")}
        return {mode: future.result() for mode, future in futures.items()}


def test_instrument_on_the_stacks_provider_gives_the_complete_guarded_trace(stacks: Any) -> None:
    (summary, report), stderr = stacks["instrument"]
    assert (summary["exception"], summary["detector"], summary["tool_calls"]) == ("Tripped", "tool_repeat", 4)
    assert report["agent_spans"] == ["ToolCallingAgent.run"] and report["agent_tripped"], report
    assert report["llm_spans"] == 5, "every call of the custom Model is traced (and so guarded)"
    assert "spanbreaker sees" not in stderr


def test_a_processor_added_by_hand_warns_once_naming_the_missing_step(stacks: Any) -> None:
    (summary, report), stderr = stacks["processor"]
    assert summary["exception"] == "Tripped", "the breaker itself works on the spans it gets"
    assert report["agent_spans"] == [] and report["llm_spans"] == 0, "what the warning is about"
    warnings = [line for line in stderr.splitlines() if line.startswith("spanbreaker sees")]
    assert warnings == [
        "spanbreaker sees smolagents spans, but spanbreaker.instrument() has not instrumented smolagents: trips "
        "cannot stop it cleanly and part of the trace goes missing. Call spanbreaker.instrument(provider) (it "
        "attaches the breaker and instruments the framework) instead of adding BreakerSpanProcessor by hand."]
