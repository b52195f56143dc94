"""Build spans shaped like the OpenInference instrumentors' (see ../shared/reference/*/ dumps) through a real
SDK TracerProvider, so the processor under test sees exactly what it sees in production."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, Status, StatusCode

import spanbreaker

SCOPE = "openinference.instrumentation.smolagents"


@dataclass
class Harness:
    processor: spanbreaker.BreakerSpanProcessor
    provider: TracerProvider
    exporter: InMemorySpanExporter
    trips: list[spanbreaker.TripRecord] = field(default_factory=list)

    @property
    def tracer(self) -> Any:
        return self.provider.get_tracer(SCOPE)

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name == name]

    # --------------------------------------------------------------------------------- span shapes
    @contextmanager
    def agent(self, name: str = "CodeAgent", task: str = "solve it", **extra: Any) -> Iterator[Span]:
        attributes = {"openinference.span.kind": "AGENT", "input.value": json.dumps({"task": task}), **extra}
        with self.tracer.start_as_current_span(f"{name}.run", attributes=attributes) as span:
            yield span

    @contextmanager
    def step(self, number: int) -> Iterator[Span]:
        with self.tracer.start_as_current_span(f"Step {number}", attributes={"openinference.span.kind": "CHAIN"}) as s:
            yield s

    def llm(self, prompt: int = 100, completion: int = 10, input_value: str | None = None,
            model: str = "scripted-model", **extra: Any) -> None:
        attributes: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.model_name": model, **extra}
        if input_value is not None:
            attributes["input.value"] = input_value
        with self.tracer.start_as_current_span("ScriptedModel.generate", attributes=attributes) as span:
            span.set_attribute("llm.token_count.prompt", prompt)
            span.set_attribute("llm.token_count.completion", completion)
            span.set_attribute("llm.token_count.total", prompt + completion)

    def tool(self, name: str, kwargs: dict[str, Any], output: str | None = "ok",
             error: BaseException | None = None) -> None:
        attributes = {
            "openinference.span.kind": "TOOL", "tool.name": name,
            "input.value": json.dumps({"args": [], "sanitize_inputs_outputs": True, "kwargs": kwargs}),
        }
        with self.tracer.start_as_current_span("SimpleTool", attributes=attributes,
                                               record_exception=False, set_status_on_exception=False) as span:
            if error is not None:
                span.record_exception(error)
                span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
            elif output is not None:
                span.set_attribute("output.value", output)

    def failed_step(self, number: int, message: str, etype: str = "smolagents.utils.AgentExecutionError",
                    prompt: int = 100) -> None:
        """A CodeAgent step whose code raised: the Step span carries the wrapper type, the root is in the text."""
        with self.step(number) as span:
            self.llm(prompt=prompt)
            span.add_event("exception", {"exception.type": etype, "exception.message": message})
            span.set_status(Status(StatusCode.ERROR, f"{etype.rsplit('.', 1)[-1]}: {message}"))


def make_harness(**overrides: Any) -> Harness:
    trips: list[spanbreaker.TripRecord] = []
    processor = spanbreaker.BreakerSpanProcessor(spanbreaker.BreakerConfig(), on_trip=trips.append, **overrides)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Harness(processor, provider, exporter, trips)


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})
