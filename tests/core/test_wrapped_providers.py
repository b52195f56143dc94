"""Tracing stacks that wrap the SDK's provider or its processors (as Pydantic Logfire does; its own tier,
``tests/pydantic_logfire``, drives the real one): spanbreaker attaches through a provider wrapper that cannot be a
dictionary key, and a span it blocks inside ``on_start`` is exported even where a wrapping processor suppresses
instrumentation around every ``on_start``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry import context
from opentelemetry.sdk.trace import SpanProcessor, SynchronousMultiSpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
from spanbreaker.instrumentation import attach, processor_for


@dataclass
class Proxy:
    """A provider wrapper that is a dataclass (unhashable), delegating to the SDK provider inside."""

    provider: TracerProvider

    def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
        return self.provider.get_tracer(*args, **kwargs)

    def add_span_processor(self, processor: Any) -> None:
        self.provider.add_span_processor(processor)


def test_a_provider_wrapper_that_cannot_be_hashed_is_attached_through() -> None:
    inner = TracerProvider()
    proxy = Proxy(inner)
    with pytest.raises(TypeError):
        hash(proxy)
    processor = attach(proxy)
    assert attach(proxy) is processor and attach(inner) is processor, "one breaker, on the provider inside"
    assert processor_for(proxy) is processor
    inner.shutdown()


class Suppressing(SpanProcessor):
    """Runs its processors' ``on_start`` with instrumentation suppressed, and drops any ``on_end`` that arrives while
    it is (what Pydantic Logfire's outermost processor does)."""

    def __init__(self, *processors: SpanProcessor) -> None:
        self.inner = SynchronousMultiSpanProcessor()
        for processor in processors:
            self.inner.add_span_processor(processor)

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        token = context.attach(context.set_value(context._SUPPRESS_INSTRUMENTATION_KEY, True))
        try:
            self.inner.on_start(span, parent_context=parent_context)
        finally:
            context.detach(token)

    def on_end(self, span: Any) -> None:
        if context.get_value(context._SUPPRESS_INSTRUMENTATION_KEY):
            return
        self.inner.on_end(span)


def test_a_span_blocked_inside_a_suppressing_processor_is_exported_marked() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(Suppressing(spanbreaker.BreakerSpanProcessor(max_model_calls=1),
                                            SimpleSpanProcessor(exporter)))
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span("run"):
        with tracer.start_as_current_span("chat gpt-4o-mini", attributes={"gen_ai.operation.name": "chat"}):
            pass
        with pytest.raises(spanbreaker.Tripped), tracer.start_as_current_span(
                "chat gpt-4o-mini", attributes={"gen_ai.operation.name": "chat"}):
            pass
    blocked = [s for s in exporter.get_finished_spans() if (s.attributes or {}).get("spanbreaker.blocked")]
    assert [s.name for s in blocked] == ["chat gpt-4o-mini"]
    assert len(exporter.get_finished_spans()) == 3, "every span that started was exported once"
    provider.shutdown()


def test_logfires_records_are_no_calls() -> None:
    """A streamed call's logged response repeats the request's GenAI keys: no second model call (nor a pending
    span's placeholder)."""
    from spanbreaker.conventions import classify
    from spanbreaker.kinds import Kind

    assert classify("Chat Completion with 'gpt-4o-mini'", {"gen_ai.operation.name": "chat"}) is Kind.LLM
    for record in ("log", "pending_span"):
        attributes = {"gen_ai.operation.name": "chat", "logfire.span_type": record}
        assert classify("streaming response from 'gpt-4o-mini' took 0.01s", attributes) is Kind.OTHER
    assert classify("x", {"gen_ai.operation.name": "chat", "logfire.span_type": ["log"]}) is Kind.LLM


def test_a_streamed_calls_logged_usage_counts_toward_the_budgets_as_no_call() -> None:
    """Logfire ends a streamed call's span without its usage and logs the usage in a record once the stream ends:
    the record's tokens and cost count toward the trace's budgets (the next model call is vetoed), its call does not
    count twice."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    processor = spanbreaker.BreakerSpanProcessor(max_tokens=700, max_model_calls=10)
    provider.add_span_processor(processor)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("logfire")
    request = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini", "gen_ai.system": "openai",
               "logfire.span_type": "span", "gen_ai.input.messages": '[{"role":"user","parts":[]}]'}
    calls = 0
    with pytest.raises(spanbreaker.Tripped) as trip, tracer.start_as_current_span("research"):
        for turn in range(1, 6):
            with tracer.start_as_current_span("Chat Completion with 'gpt-4o-mini'", attributes=request):
                calls += 1
            with tracer.start_as_current_span("streaming response from 'gpt-4o-mini' took 0.01s", attributes={
                    **request, "logfire.span_type": "log", "gen_ai.usage.input_tokens": 120 * turn,
                    "gen_ai.usage.output_tokens": 20}):
                pass
    assert (trip.value.detector, calls) == ("token_budget", 3), "780 tokens after three calls: the fourth vetoed"
    assert trip.value.evidence["tokens"] == 780, trip.value.evidence
    provider.shutdown()
