"""Agno failure scenarios: how early the breaker stops them, against Agno's own guards alone.

Each scenario runs twice on real Agno agents and teams with the real OpenInference instrumentor, a scripted
model standing in for the LLM:

* guard only: the breaker in ``observe`` mode (it detects, never blocks) and Agno's own guard where one exists
  (``tool_call_limit=10``; Agno has no limit on model turns or delegations). The scripted model gives up after
  ``TURNS`` turns, standing in for a provider's max-iterations or a user's patience.
* breaker: the same run in ``enforce`` mode.

"Calls" are model calls plus tool executions actually made (a refused or vetoed call is not made). The session
scenario counts the runs of one session: the breaker cancels the first run whose history is too long, before
its model call.

    python benchmarks/agno_scenarios.py
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("AGNO_TELEMETRY", "false")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from opentelemetry.sdk.trace import TracerProvider

import spanbreaker
from spanbreaker.adapters.agno import ADAPTER, trip_record
from spanbreaker.instrumentation import attach
from tests.agno.scripted import calls, scripted, tool_call

TURNS = 30
TOOL_CALL_LIMIT = 10
logging.disable(logging.WARNING)  # Agno resets its own logger levels on every run


@dataclass
class Outcome:
    calls: int
    status: str
    detector: str | None


@dataclass
class Counter:
    tools: int = 0


Scenario = Callable[[Counter], tuple[Any, list[Any], Callable[[Any], Any]]]


def _run_once(build: Scenario, mode: str, overrides: dict[str, Any]) -> Outcome:
    provider = TracerProvider()
    processor = attach(provider, spanbreaker.BreakerConfig(mode=mode).replace(**overrides))  # type: ignore[arg-type]
    ADAPTER.instrument(provider, processor)
    try:
        counter = Counter()
        target, models, go = build(counter)
        output = go(target)
        record = trip_record(output, processor)
        return Outcome(sum(calls(m) for m in models) + counter.tools, output.status.value,
                       record.detector if record else None)
    finally:
        ADAPTER.uninstrument()
        provider.shutdown()


def repetition_storm(counter: Counter) -> tuple[Any, list[Any], Callable[[Any], Any]]:
    from agno.agent import Agent

    def fetch(url: str) -> str:
        """Fetch a URL."""
        counter.tools += 1
        return "403 Forbidden"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("fetch", url="https://x.test/a")]} if i < TURNS
                     else {"content": "gave up"})
    agent = Agent(name="Fetcher", model=model, tools=[fetch], tool_call_limit=TOOL_CALL_LIMIT)
    return agent, [model], lambda a: a.run("get the page")


def batched_storm(counter: Counter) -> tuple[Any, list[Any], Callable[[Any], Any]]:
    from agno.agent import Agent

    def lookup(sku: str) -> str:
        """Look up a SKU."""
        counter.tools += 1
        return "[]"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("lookup", sku="A-1") for _ in range(8)]} if i < 3
                     else {"content": "not found"})
    agent = Agent(name="Batcher", model=model, tools=[lookup], tool_call_limit=TOOL_CALL_LIMIT)
    return agent, [model], lambda a: a.run("find A-1")


def refused_calls(counter: Counter) -> tuple[Any, list[Any], Callable[[Any], Any]]:
    from agno.agent import Agent

    def search(query: str) -> str:
        """Search."""
        counter.tools += 1
        return f"results for {query}"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("search", query=f"attempt {i}")]} if i < TURNS
                     else {"content": "gave up"})
    agent = Agent(name="Limited", model=model, tools=[search], tool_call_limit=TOOL_CALL_LIMIT)
    return agent, [model], lambda a: a.run("research")


def back_delegation(counter: Counter) -> tuple[Any, list[Any], Callable[[Any], Any]]:
    from agno.agent import Agent
    from agno.team import Team

    member = scripted(lambda m, i: {"content": "The lead must clarify the task first."})
    lead = scripted(lambda m, i: {"tool_calls": [tool_call(
        "delegate_task_to_member", member_id="researcher", task="find the root cause")]} if i < TURNS
        else {"content": "escalate"})
    team = Team(name="Lead", model=lead, members=[Agent(name="Researcher", model=member)])
    return team, [lead, member], lambda t: t.run("why did checkout fail?")


def invalid_structured_output(counter: Counter) -> tuple[Any, list[Any], Callable[[Any], Any]]:
    from agno.agent import Agent
    from agno.team import Team
    from pydantic import BaseModel

    class Weather(BaseModel):
        city: str
        temp_c: float

    member = scripted(lambda m, i: {"content": "It is warm and sunny."})
    lead = scripted(lambda m, i: {"tool_calls": [tool_call(
        "delegate_task_to_member", member_id="forecaster", task=f"weather in Paris as JSON, try {i + 1}")]}
        if i < TURNS else {"content": "no forecast"})
    team = Team(name="Desk", model=lead, members=[Agent(name="Forecaster", model=member, output_schema=Weather)])
    return team, [lead, member], lambda t: t.run("forecast for Paris")


def token_budget(counter: Counter) -> tuple[Any, list[Any], Callable[[Any], Any]]:
    from agno.agent import Agent
    from agno.team import Team

    member = scripted(lambda m, i: {"content": f"finding {i}", "usage": (8000, 2000)})
    lead = scripted(lambda m, i: {"tool_calls": [tool_call(
        "delegate_task_to_member", member_id="analyst", task=f"analyse segment {i}")], "usage": (8000, 2000)}
        if i < TURNS else {"content": "report", "usage": (8000, 2000)})
    team = Team(name="Lead", model=lead, members=[Agent(name="Analyst", model=member)])
    return team, [lead, member], lambda t: t.run("analyse every segment")


def session_bloat(counter: Counter) -> tuple[Any, list[Any], Callable[[Any], Any]]:
    from agno.agent import Agent
    from agno.db.sqlite import SqliteDb

    folder = tempfile.mkdtemp()
    model = scripted(lambda m, i: {"content": f"answer {i}: " + "details " * 40})
    agent = Agent(name="Assistant", model=model, db=SqliteDb(db_file=str(Path(folder) / "s.db")),
                  session_id="customer-42", add_history_to_context=True, num_history_runs=100)

    def go(a: Any) -> Any:
        output = None
        for turn in range(12):
            output = a.run(f"question {turn}")
            if output.status.value == "CANCELLED":
                break
        return output

    return agent, [model], go


def workflow_step_loop(counter: Counter) -> tuple[Any, list[Any], Callable[[Any], Any]]:
    """A ``Workflow`` (research, then write): the research agent fetches the same page again and again."""
    from agno.agent import Agent
    from agno.workflow import Step, Workflow

    def fetch(url: str) -> str:
        """Fetch a URL."""
        counter.tools += 1
        return "403 Forbidden"

    model = scripted(lambda m, i: {"tool_calls": [tool_call("fetch", url="https://x.test/a")]} if i < TURNS
                     else {"content": "gave up"})
    writer = scripted(lambda m, i: {"content": "report"})
    workflow = Workflow(name="Pipeline", steps=[
        Step(name="research", agent=Agent(name="Researcher", model=model, tools=[fetch],
                                          tool_call_limit=TOOL_CALL_LIMIT)),
        Step(name="write", agent=Agent(name="Writer", model=writer))])
    return workflow, [model, writer], lambda w: w.run("write up the page")


def tasks_member_loop(counter: Counter) -> tuple[Any, list[Any], Callable[[Any], Any]]:
    """A ``TeamMode.tasks`` team: the leader creates a task and has the worker execute it; the worker loops."""
    import re

    from agno.agent import Agent
    from agno.team import Team
    from agno.team.mode import TeamMode

    def fetch(url: str) -> str:
        """Fetch a URL."""
        counter.tools += 1
        return "403 Forbidden"

    def task_id(messages: list[Any]) -> str:
        found = re.findall(r"Task created: \[(\w+)\]", " ".join(str(getattr(m, "content", "")) for m in messages))
        return found[-1] if found else "missing"

    worker = scripted(lambda m, i: {"tool_calls": [tool_call("fetch", url="https://x.test/a")]} if i < TURNS
                      else {"content": "gave up"})
    lead = scripted(lambda m, i: {"tool_calls": [tool_call("create_task", title="Fetch the page", assignee="worker")]}
                    if i == 0 else {"tool_calls": [tool_call("execute_task", task_id=task_id(m), member_id="worker")]}
                    if i == 1 else {"content": "done"})
    team = Team(name="Crew", model=lead, mode=TeamMode.tasks, members=[
        Agent(name="Worker", model=worker, tools=[fetch], tool_call_limit=TOOL_CALL_LIMIT)])
    return team, [lead, worker], lambda t: t.run("get the page")


SCENARIOS: list[tuple[str, Scenario, dict[str, Any]]] = [
    ("repetition storm (across turns)", repetition_storm, {}),
    ("repetition storm (batched, one turn)", batched_storm, {}),
    (f"tool_call_limit={TOOL_CALL_LIMIT} refused-call loop", refused_calls, {}),
    ("team back-delegation", back_delegation, {}),
    ("invalid structured output (team)", invalid_structured_output, {}),
    ("token budget 100k (leader+member)", token_budget, {"max_tokens": 100_000}),
    ("session history bloat (12 runs)", session_bloat, {"session_history_messages": 10}),
    ("workflow step loop (research, then write)", workflow_step_loop, {}),
    ("TeamMode.tasks member loop", tasks_member_loop, {}),
]


def _healthy_run_seconds(with_breaker: bool, runs: int, turns: int) -> float:
    """Median CPU time of a healthy ``turns``-turn agent run (fresh results each call)."""
    from agno.agent import Agent

    provider = TracerProvider()
    processor = spanbreaker.BreakerSpanProcessor(spanbreaker.BreakerConfig())
    if with_breaker:
        provider.add_span_processor(processor)
    ADAPTER.instrument(provider, processor)  # without the breaker: the same instrumentation, nobody listening
    times = []
    try:
        for _ in range(runs):
            def read(page: int) -> str:
                """Read a page."""
                return f"page {page}: " + " ".join(f"fact-{page}-{k}" for k in range(20))

            model = scripted(lambda m, i: {"tool_calls": [tool_call("read", page=i)]} if i < turns
                             else {"content": "summary"})
            agent = Agent(name="Reader", model=model, tools=[read])
            started = time.process_time()  # CPU time of this process: less disturbed by a busy machine
            agent.run("summarise the book")
            times.append(time.process_time() - started)
    finally:
        ADAPTER.uninstrument()
        provider.shutdown()
    times.sort()
    return times[len(times) // 2]


def main() -> None:
    rows = []
    started = time.perf_counter()
    for name, build, overrides in SCENARIOS:
        guard = _run_once(build, "observe", overrides)
        breaker = _run_once(build, "enforce", overrides)
        rows.append((name, breaker.detector or "-", breaker.calls, guard.calls, guard.calls - breaker.calls,
                     breaker.status, guard.detector or "-"))
    header = ("scenario", "detector", "calls to trip", "guard alone", "saved", "status", "observe saw")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)))
    print(f"\ncalls = model calls + tool executions made; guard alone = observe mode with tool_call_limit="
          f"{TOOL_CALL_LIMIT} where it applies, scripted model gives up after {TURNS} turns. "
          f"({time.perf_counter() - started:.1f} s)")
    turns, runs = 20, 15
    _healthy_run_seconds(True, 2, turns)  # warm-up: imports, lazy wrapping
    rounds = [(_healthy_run_seconds(False, runs, turns), _healthy_run_seconds(True, runs, turns)) for _ in range(5)]
    bare, breaker = min(r[0] for r in rounds), min(r[1] for r in rounds)  # interleaved; least disturbed round
    spans = 2 * turns + 2
    print(f"healthy {turns}-turn agent run ({spans} spans), median CPU time of {runs}, best of 5 interleaved rounds: "
          f"instrumented {bare * 1000:.1f} ms, with breaker {breaker * 1000:.1f} ms "
          f"(+{(breaker - bare) * 1e6 / spans:.0f} us per span)")
    print(json.dumps({"scenarios": [dict(zip(header, r, strict=True)) for r in rows],
                      "overhead": {"turns": turns, "spans": spans, "instrumented_ms": round(bare * 1000, 2),
                                   "with_breaker_ms": round(breaker * 1000, 2)}}))


if __name__ == "__main__":
    main()
