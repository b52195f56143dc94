"""The processor never breaks the host: odd, missing or huge attributes, concurrency, many traces. Nothing but
``Tripped`` may escape, and no trace's state leaks into another's."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider

import spanbreaker
from spanbreaker import Tripped, jsontext

from .spans import make_harness

KEYS = ["openinference.span.kind", "tool.name", "input.value", "output.value", "llm.token_count.prompt",
        "llm.token_count.completion", "llm.token_count.total", "llm.cost.total", "llm.model_name",
        "gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.usage.input_tokens", "session.id", "agent.name",
        "spanbreaker.validation_failed", "exception.type", "llm.token_count.prompt_details.cache_read",
        "gen_ai.usage.cache_creation.input_tokens", "langfuse.observation.type", "langfuse.observation.input",
        "langfuse.observation.usage_details"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=300),
                    st.sampled_from(["AGENT", "TOOL", "LLM", "CHAIN", "tool", "execute_tool", "chat", "generation",
                                     "{", "[]", '{"prompt_tokens_details": {"cached_tokens": -3}}',
                                     '{"messages": [{"role": "tool", "tool_call_id": 1}]}',
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
    assert h.processor.stats.internal_errors == 0, "odd values are read as absent, not swallowed as errors"


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
    a subclass; ``on_end`` gets a ``ReadableSpan``); any other span goes through the public properties. If the SDK
    renames a class or a field the hooks read, this fails so the fast path is updated, rather than silently
    falling back to the slow one or losing spans."""
    from opentelemetry.attributes import BoundedAttributes
    from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
    from opentelemetry.sdk.util import BoundedList
    from opentelemetry.trace import SpanContext, Status

    from spanbreaker import processor

    ended: list[ReadableSpan] = []

    class Keep(SpanProcessor):
        def on_end(self, span: ReadableSpan) -> None:
            ended.append(span)

    provider = TracerProvider()
    provider.add_span_processor(Keep())
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("parent"):
        span = tracer.start_span("s", attributes={"k": "v"})
    span.add_event("e")
    span.end()
    for sdk_span in (span, ended[-1]):
        assert type(sdk_span) in processor._SDK_SPANS
        assert type(sdk_span._context) is SpanContext and type(sdk_span._parent) is SpanContext
        assert type(sdk_span._attributes) is BoundedAttributes and sdk_span._attributes._dict == {"k": "v"}
        assert type(sdk_span._events) is BoundedList and len(sdk_span._events._dq) == 1
        assert type(sdk_span._status) is Status and sdk_span._name == "s"


class _Wrapped:
    """A span object the SDK did not make (a vendor wrapper): only the public properties."""

    def __init__(self, span: Any) -> None:
        self._wrapped = span

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._wrapped, name)


def test_span_objects_the_sdk_did_not_make_are_read_through_their_public_properties() -> None:
    """The same loop, once through the SDK's spans and once through wrappers the fast path does not know: the
    same trip, no internal error."""
    from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor

    class Feed(SpanProcessor):
        def __init__(self, breaker: spanbreaker.BreakerSpanProcessor, wrap: bool) -> None:
            self.breaker, self.wrap = breaker, wrap

        def on_start(self, span: Any, parent_context: Any = None) -> None:
            self.breaker.on_start(_Wrapped(span) if self.wrap else span, parent_context)

        def on_end(self, span: ReadableSpan) -> None:
            self.breaker.on_end(_Wrapped(span) if self.wrap else span)

    trips: list[str] = []
    for wrap in (False, True):
        breaker = spanbreaker.BreakerSpanProcessor(mode="observe")
        provider = TracerProvider()
        provider.add_span_processor(Feed(breaker, wrap))
        tracer = provider.get_tracer("t")
        with tracer.start_as_current_span("a.run", attributes={"openinference.span.kind": "AGENT"}) as agent:
            for _ in range(6):
                with tracer.start_as_current_span("t", attributes={
                        "openinference.span.kind": "TOOL", "tool.name": "t", "input.value": "{}",
                        "output.value": "x"}):
                    pass
        assert breaker.stats.internal_errors == 0
        record = breaker.trip_record(agent.get_span_context().trace_id)
        assert record is not None
        trips.append(record.detector)
    assert trips[0] == trips[1] == "tool_repeat"


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(value=_JSON_VALUES, ascii_only=st.booleans())
def test_hot_path_json_reads_every_text_as_the_json_module_does(value: object, ascii_only: bool) -> None:
    """``jsontext.loads`` (msgspec first) reads what ``json.loads`` reads, NaN, integers past 64 bits and lone
    surrogates included, and refuses what it refuses."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert repr(jsontext.loads(text)) == repr(json.loads(text))
    broken = text[:-1] if len(text) > 1 else "{"
    try:
        expected: object = json.loads(broken)
    except ValueError:
        with pytest.raises(ValueError):
            jsontext.loads(broken)
    else:
        assert repr(jsontext.loads(broken)) == repr(expected)


@pytest.mark.parametrize("text", ['"\\ud800 lone"', "NaN", "[-Infinity, 1e400]", "123456789012345678901234567890",
                                  '{"a": 1, "a": 2}', "[" * 2000 + "]" * 2000])
def test_hot_path_json_defers_to_the_json_module_where_orjson_refuses(text: str) -> None:
    try:
        expected: object = json.loads(text)
    except RecursionError:
        with pytest.raises(RecursionError):
            jsontext.loads(text)
        return
    assert repr(jsontext.loads(text)) == repr(expected)
