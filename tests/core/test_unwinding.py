"""Hooks run just before a trip is raised out of a span's start (:mod:`spanbreaker.unwinding`): for frameworks whose
wrappers clean up only on an ``Exception`` (the Traceloop SDK's synchronous decorators; driven for real in
``tests/traceloop_decorators``)."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
from spanbreaker import unwinding

TOOL = {"openinference.span.kind": "TOOL", "tool.name": "search", "input.value": '{"q": "same"}'}


def test_hooks_see_the_trip_after_the_blocked_span_ended_and_before_it_is_raised() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(spanbreaker.BreakerSpanProcessor(max_tool_calls=1))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("app")
    seen: list[tuple[Any, int]] = []

    def hook(exception: BaseException) -> None:
        seen.append((exception, len(exporter.get_finished_spans())))

    def failing(exception: BaseException) -> None:
        raise RuntimeError("a hook's own bug")

    unwinding.register(failing)
    unwinding.register(hook)
    unwinding.register(hook)
    try:
        with pytest.raises(spanbreaker.Tripped) as trip, tracer.start_as_current_span("run"):
            with tracer.start_as_current_span("search", attributes=TOOL):
                pass
            with tracer.start_as_current_span("search", attributes=TOOL):
                pass
    finally:
        unwinding.unregister(hook)
        unwinding.unregister(failing)
    assert [(exception is trip.value, ended) for exception, ended in seen] == [(True, 2)], \
        "once, with the first call and the blocked one exported, before the raise; a failing hook does not stop it"
    provider.shutdown()


def test_a_trip_found_as_a_span_ends_runs_no_hook() -> None:
    """Nothing is raised out of a span's end (the next start is the one blocked): no hook runs then."""
    provider = TracerProvider()
    processor = spanbreaker.BreakerSpanProcessor(max_tokens=10)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("app")
    seen: list[BaseException] = []
    unwinding.register(seen.append)
    try:
        with tracer.start_as_current_span("run") as run, tracer.start_as_current_span("chat", attributes={
                "openinference.span.kind": "LLM", "llm.token_count.total": 50}):
            pass
        record = processor.trip_record(run.get_span_context().trace_id)
        assert record is not None and record.detector == "token_budget", "the trip was found as the call ended"
        assert seen == []
    finally:
        unwinding.unregister(seen.append)
    assert unwinding._hooks == (), "unregistered (a bound method, by equality)"
    provider.shutdown()
