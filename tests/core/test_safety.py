"""The processor never breaks the host: odd, missing or huge attributes, concurrency, many traces. Nothing but
``Tripped`` may escape, and no trace's state leaks into another's."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider

import spanbreaker
from spanbreaker import Tripped

from .spans import make_harness

KEYS = ["openinference.span.kind", "tool.name", "input.value", "output.value", "llm.token_count.prompt",
        "llm.token_count.completion", "llm.token_count.total", "llm.cost.total", "llm.model_name",
        "gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.usage.input_tokens", "session.id", "agent.name",
        "spanbreaker.validation_failed", "exception.type"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=300),
                    st.sampled_from(["AGENT", "TOOL", "LLM", "CHAIN", "tool", "execute_tool", "chat", "{", "[]",
                                     '{"args": [1], "kwargs": {"a": [1, {"b": null}]}}', "NaN", "-1"]))
values = st.one_of(scalars, st.lists(st.one_of(st.text(max_size=20), st.integers(0, 10)), max_size=5))
attribute_maps = st.dictionaries(st.sampled_from(KEYS), values, max_size=8)
names = st.sampled_from(["Step 1", "x.run", "M.generate", "M.invoke", "SimpleTool", "", "invoke_agent a",
                         "execute_tool t"])
span_plans = st.lists(st.tuples(names, attribute_maps, attribute_maps, st.integers(0, 3)), min_size=1, max_size=25)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=span_plans)
def test_fuzzed_attributes_raise_nothing_but_tripped(plan: list[tuple[str, dict[str, Any], dict[str, Any], int]],
                                                     ) -> None:
    h = make_harness(max_model_calls=8)
    tracer = h.tracer
    stack: list[Any] = []
    for name, start_attributes, end_attributes, depth in plan:
        clean = {k: v for k, v in start_attributes.items() if v is not None}
        try:
            span = tracer.start_span(name, attributes=clean)
        except Tripped:
            continue
        for key, value in end_attributes.items():
            if value is not None:
                span.set_attribute(key, value)
        if depth == 0:
            span.add_event("exception", {"exception.type": str(end_attributes.get("exception.type", "X")),
                                         "exception.message": "KeyError: 'x' due to ValueError"})
        stack.append(span)
        if len(stack) > depth:
            stack.pop(0).end()
    for span in stack:
        span.end()
    assert h.processor.stats.spans_started >= 1


def test_huge_attributes_cost_bounded_time_and_are_ignored_safely() -> None:
    h = make_harness()
    huge = "x" * 10_000_000
    begin = time.perf_counter()
    with contextlib.suppress(Tripped), h.agent():  # reading the same 10 MB again may well be a loop
        for n in range(5):
            h.tool("read", {"path": f"big{n}.csv", "blob": huge}, output=huge)
            h.llm(input_value=huge[: 20_000 * (n + 1)])
    elapsed = time.perf_counter() - begin
    # bounded work: far less than hashing 10 MB twice per span would cost, and no exception
    assert h.processor.stats.internal_errors == 0
    print(f"10 MB attributes: {elapsed * 1000:.1f} ms for 15 spans")


def test_concurrent_traces_on_many_threads_never_leak_into_each_other() -> None:
    h = make_harness()
    results: dict[int, str] = {}
    errors: list[BaseException] = []

    def run(worker: int) -> None:
        looping = worker % 2 == 0
        try:
            with h.agent(name=f"agent{worker}"):
                for n in range(30):
                    h.tool("search", {"q": "same" if looping else f"q{n}"},
                           output="nothing" if looping else f"r{n}")
            results[worker] = "finished"
        except Tripped as exc:
            results[worker] = exc.detector
        except BaseException as exc:  # pragma: no cover - the assertion below reports it
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert all(results[w] == ("tool_repeat" if w % 2 == 0 else "finished") for w in range(40))
    assert h.processor.engine.traces == {}


def test_concurrent_spans_of_one_trace_from_worker_threads() -> None:
    """Parallel tool calls (smolagents' thread pool, Agno's asyncio.to_thread) in one trace."""
    h = make_harness(max_tool_calls=100_000)
    tripped: list[str] = []
    with h.agent():
        from opentelemetry import context

        ctx = context.get_current()

        def worker(n: int) -> None:
            token = context.attach(ctx)
            try:
                for i in range(50):
                    h.tool("fetch", {"n": n, "i": i}, output=f"{n}-{i}")
            except Tripped as exc:
                tripped.append(exc.detector)
            finally:
                context.detach(token)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert tripped == []
    assert h.processor.stats.internal_errors == 0


def test_processor_works_on_a_provider_that_already_has_processors() -> None:
    provider = TracerProvider()
    # frameworks=(): this test is about the processor; instrumenting frameworks here would leak into other suites
    processor = spanbreaker.instrument(provider, frameworks=())
    assert spanbreaker.instrument(provider, frameworks=()) is processor  # idempotent
    with pytest.raises(Tripped), provider.get_tracer("t").start_as_current_span(
            "a.run", attributes={"openinference.span.kind": "AGENT"}):
        for _ in range(6):
            with provider.get_tracer("t").start_as_current_span("t", attributes={
                    "openinference.span.kind": "TOOL", "tool.name": "t", "input.value": "{}", "output.value": "x"}):
                pass


def test_the_fast_path_knows_the_sdks_span_classes() -> None:
    """The hot path reads the SDK's span fields directly for the classes it knows (the tracer makes ``_Span``,
    a subclass); any other span goes through the public properties. If the SDK renames its class, this fails
    so the fast path is updated, rather than silently falling back to the slow one."""
    from opentelemetry.trace import SpanContext

    from spanbreaker import processor

    span = TracerProvider().get_tracer("t").start_span("s")
    assert type(span) in processor._SDK_SPANS
    assert type(span.get_span_context()) is SpanContext
    span.end()
