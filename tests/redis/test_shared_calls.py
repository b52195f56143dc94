"""tool_repeat across processes (issue 17 item 5): the shared call ledger on a real redis-server.

Two breakers in this process stand for two processes of one trace (own Redis clients, own flusher threads, own
origin). Each process's agent makes some of the trace's calls; every call is followed by a flush of the process
that made it, and every model call by a flush of its process (the read-back of that process's recent calls),
which is what a real agent's model latency gives the flusher time to do. The real-process test is in
test_processes.py.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace

import spanbreaker
from spanbreaker.state import calls

from ..core.spans import Harness, make_harness
from .procs import remote_parent, wait_until
from .server import RedisServer

AGENT = "researcher"
SAME = {"query": "span processor shutdown"}
ANSWER = "Shutdown flushes the exporters and stops the batch worker."


class Trace:
    """One trace spread over the pair: each process runs the same agent (its own agent span, under the same remote
    parent, as its own context), and the test decides which process makes each call."""

    def __init__(self, pair: tuple[Harness, Harness], trace_id: int, agents: tuple[str, str] = (AGENT, AGENT)) -> None:
        self.pair = pair
        self.trace_id = trace_id
        self.calls = 0
        parent = remote_parent(trace_id)
        self.agents = [harness.tracer.start_span(f"{name}.run", context=parent, attributes={
            "openinference.span.kind": "AGENT", "input.value": json.dumps({"task": "find why shutdown hangs"})})
            for harness, name in zip(pair, agents, strict=True)]
        self.contexts = [otel_trace.set_span_in_context(span, parent) for span in self.agents]

    def call(self, process: int, kwargs: dict[str, str] = SAME, output: str | None = ANSWER,
             turn: bool = True) -> None:
        """A model turn (unless ``turn`` is False: another call of the same turn), then one tool call."""
        harness = self.pair[process]
        token = otel_context.attach(self.contexts[process])
        try:
            if turn:
                harness.llm()
                assert harness.processor.shared.flush()
            self.calls += 1
            harness.tool("search", kwargs, output=output)
            assert harness.processor.shared.flush()
        finally:
            otel_context.detach(token)

    def end(self) -> None:
        for span in self.agents:
            span.end()


@pytest.fixture
def trace(pair: tuple[Harness, Harness]) -> Iterator[Trace]:
    made = Trace(pair, int(uuid.uuid4().hex, 16))
    yield made
    made.end()


def test_identical_calls_split_over_two_processes_trip_at_the_count_of_one(trace: Trace) -> None:
    """A1 B1 A2 B2: four identical calls with identical results, two per process (each alone is far from the
    limit of 4 repeats); the fifth, in either process, is vetoed before it runs, as in one process."""
    for process in (0, 1, 0, 1):
        trace.call(process)
    with pytest.raises(spanbreaker.Tripped) as caught:
        trace.call(0)
    trip = caught.value
    assert trip.detector == "tool_repeat"
    assert trip.evidence["identical_calls"] == 5 and trip.evidence["across_processes"] is True
    assert "across the processes" in trip.reason
    first = trace.pair[0]
    assert first.processor.trip_record(trace.trace_id) is not None
    blocked = [s for s in first.named("SimpleTool") if (s.attributes or {}).get("spanbreaker.blocked")]
    assert len(blocked) == 1, "the fifth call was vetoed before it ran, and exported"


def test_the_other_process_is_stopped_too(trace: Trace) -> None:
    for process in (0, 1, 0, 1):
        trace.call(process)
    with pytest.raises(spanbreaker.Tripped):
        trace.call(1)
    with pytest.raises(spanbreaker.Tripped) as caught:  # the trip is published: the first process stops as well
        for _ in range(50):
            trace.call(0, kwargs={"query": f"something new {trace.calls}"})
    assert caught.value.detector == "tool_repeat"
    assert trace.calls <= 7


def test_a_change_in_the_other_process_restarts_the_count(trace: Trace) -> None:
    """The healthy look-alike: a test re-run after every edit, the edits made by the other process."""
    for process in (0, 1):
        trace.call(process)
    trace.call(1, kwargs={"edit": "line 41"}, output="Successfully edited file")
    for process in (0, 1, 0, 1):  # four identical calls since the edit: still within the limit
        trace.call(process)
    with pytest.raises(spanbreaker.Tripped) as caught:
        trace.call(0)
    assert caught.value.evidence["identical_calls"] == 5


def test_results_that_move_are_progress(trace: Trace) -> None:
    """Polling a job whose status moves, from both processes: the same call, never the same result twice in a
    row, never trips."""
    for n in range(12):
        trace.call(n % 2, kwargs={"job": "build 7"}, output=f"running: {n * 8}% done")


def test_identical_calls_in_one_model_turn_count_once(trace: Trace) -> None:
    """A parallel batch of three identical calls in one turn is one decision, in the ledger as in one process."""
    trace.call(0)
    trace.call(1)
    trace.call(1, turn=False)
    trace.call(1, turn=False)
    trace.call(0)  # 3 decisions so far
    trace.call(1)  # 4
    with pytest.raises(spanbreaker.Tripped) as caught:
        trace.call(0)
    assert caught.value.evidence["identical_calls"] == 5


def test_an_unrecorded_result_is_a_change(trace: Trace) -> None:
    for process in (0, 1, 0):
        trace.call(process)
    trace.call(1, output=None)  # the instrumentor did not record what came back: nothing says it was the same
    for process in (0, 1, 0):
        trace.call(process)


def test_other_agents_calls_are_other_calls(pair: tuple[Harness, Harness]) -> None:
    """A client's TOOL span and a service's span for the same remote call are in different agent scopes: the
    ledger keys the agent too, so one call is never counted twice (keyed on the tool alone, the fifth of these
    eight identical calls would trip)."""
    trace = Trace(pair, int(uuid.uuid4().hex, 16), agents=("client", "tool-service"))
    for _ in range(4):
        trace.call(0)
        trace.call(1)
    trace.end()


def test_only_digests_are_stored(trace: Trace, redis_server: RedisServer, prefix: str) -> None:
    trace.call(0, kwargs={"query": "SECRET QUERY"}, output="SECRET ANSWER")
    client = redis_server.client()
    stored = client.hgetall(f"{prefix}:trace:{trace.trace_id:032x}")
    fields = [name for name in stored if name.startswith(b"k:")]
    assert len(fields) == 1 and int(stored[b"kn"]) == 1
    assert b"SECRET" not in b"".join(k + v for k, v in stored.items())
    result, streak, mark = stored[fields[0]].split(b":")
    assert len(result) == 16 and streak == b"1" and mark == stored[b"q"]


def test_the_ledger_is_bounded_in_redis(trace: Trace, redis_server: RedisServer, prefix: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calls, "MAX_FIELDS", 8)
    for n in range(20):
        trace.call(n % 2, kwargs={"query": f"distinct {n}"})
    stored = redis_server.client().hgetall(f"{prefix}:trace:{trace.trace_id:032x}")
    assert sum(1 for name in stored if name.startswith(b"k:")) <= 9
    assert int(stored[b"kn"]) <= 9


def test_redis_down_the_shared_count_is_set_aside_and_nothing_breaks(own_redis: RedisServer, prefix: str) -> None:
    """While Redis is down a process cannot know what the others changed: it decides on its own calls only, and the
    app sees no error (the local limit still holds)."""
    made = (make_harness(state=own_redis.url, state_prefix=prefix, state_staleness_s=0.02),
            make_harness(state=own_redis.url, state_prefix=prefix, state_staleness_s=0.02))
    trace = Trace(made, int(uuid.uuid4().hex, 16))
    try:
        for process in (0, 1, 0, 1):
            trace.call(process)
        own_redis.kill()
        assert wait_until(lambda: all(h.processor.shared.degraded for h in made))
        first = made[0]
        token = otel_context.attach(trace.contexts[0])
        try:
            first.llm()
            first.tool("search", SAME, output=ANSWER)  # the 5th call: 3rd here, under the local limit
            first.llm()
            first.tool("search", SAME, output=ANSWER)
            with pytest.raises(spanbreaker.Tripped) as caught:  # the 5th here: the local count trips
                first.llm()
                first.tool("search", SAME, output=ANSWER)
        finally:
            otel_context.detach(token)
        assert caught.value.evidence["identical_calls"] == 5 and "across_processes" not in caught.value.evidence
    finally:
        trace.end()
        for harness in made:
            harness.processor.shutdown()
