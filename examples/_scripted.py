"""A scripted stand-in for the LLM, shared by the smolagents examples (the model is the only stub).

Each call returns the next scripted ``ChatMessage`` (the last one repeats), with a token count, so that the
OpenInference instrumentor records real LLM spans and the breaker sees real usage figures.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
    TokenUsage,
)

Reply = ChatMessage | Callable[[list[Any]], ChatMessage]


class ScriptedModel(Model):
    """Replays a script of replies; an item may be a callable of the messages (to raise, or to adapt)."""

    def __init__(self, script: Sequence[Reply], model_id: str = "scripted-model", **kwargs: Any) -> None:
        super().__init__(model_id=model_id, **kwargs)
        self.script = list(script)
        self.calls = 0

    def generate(self, messages: list[Any], stop_sequences: list[str] | None = None,
                 response_format: dict[str, str] | None = None, tools_to_call_from: list[Any] | None = None,
                 **kwargs: Any) -> ChatMessage:
        item = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        return item(messages) if callable(item) else item


def _usage(messages_chars: int = 0) -> TokenUsage:
    return TokenUsage(input_tokens=400 + messages_chars // 4, output_tokens=40)


def code_reply(code: str, thought: str = "Let me try this.") -> ChatMessage:
    """What a CodeAgent model answers: a thought and a code block."""
    return ChatMessage(role=MessageRole.ASSISTANT, content=f"Thought: {thought}\n<code>\n{code}\n</code>",
                       token_usage=_usage())


def tool_reply(name: str, arguments: dict[str, Any], call_id: str = "call_0") -> ChatMessage:
    """What a ToolCallingAgent model answers: one tool call."""
    return tool_replies([(name, arguments)], call_id)


def tool_replies(calls: Sequence[tuple[str, dict[str, Any]]], call_id: str = "call") -> ChatMessage:
    """Several tool calls in one answer (ToolCallingAgent runs them in parallel)."""
    return ChatMessage(
        role=MessageRole.ASSISTANT, content=None,
        tool_calls=[ChatMessageToolCall(id=f"{call_id}_{i}", type="function",
                                        function=ChatMessageToolCallFunction(name=name, arguments=args))
                    for i, (name, args) in enumerate(calls)],
        raw=json.dumps([name for name, _ in calls]), token_usage=_usage())


def global_tracing() -> tuple[Any, Any]:
    """A global SDK provider exporting to memory (a real exporter), with spanbreaker attached to it.

    Returns (exporter, processor). Only smolagents is instrumented: the examples use no other framework.
    """
    from opentelemetry import trace
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    import spanbreaker

    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    processor = spanbreaker.instrument(frameworks=["smolagents"])
    return exporter, processor


def print_span_tree(spans: Sequence[Any]) -> None:
    """The exported spans as a tree, with status and the trip attributes where they are set."""
    children: dict[int | None, list[Any]] = {}
    ids = {s.context.span_id for s in spans}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        parent = span.parent.span_id if span.parent is not None and span.parent.span_id in ids else None
        children.setdefault(parent, []).append(span)

    def show(span: Any, depth: int) -> None:
        attributes = span.attributes or {}
        label = span.name if attributes.get("openinference.span.kind") != "TOOL" else \
            f"tool {attributes.get('tool.name', span.name)}"
        marks = ""
        if attributes.get("spanbreaker.tripped"):
            marks = f"  spanbreaker.detector={attributes.get('spanbreaker.detector')}"
            if attributes.get("spanbreaker.blocked"):
                marks += " spanbreaker.blocked=true"
        print(f"  {'  ' * depth}{label:<{36 - 2 * depth}} {span.status.status_code.name:<5}{marks}")
        for child in children.get(span.context.span_id, []):
            show(child, depth + 1)

    for root in children.get(None, []):
        show(root, 0)


def print_trip(trip: Any, processor: Any, spans: Sequence[Any], model_calls: int, max_steps: int,
               without: str | None = None) -> None:
    """A short account of a trip: detector, reason, where, and the calls it saved."""
    record = processor.trip_record(trip.trace_id)
    marked = [s for s in spans if (s.attributes or {}).get("spanbreaker.tripped")]
    errors = sum(1 for s in spans if s.status.status_code.name == "ERROR")
    print("spanbreaker stopped the agent.")
    print(f"  detector : {trip.detector}")
    print(f"  reason   : {trip.reason}")
    where = f"{record.step or '-'} of {record.agent or '-'}" if record is not None else "?"
    print(f"  where    : {where} (the next call was refused before it was made)")
    print(f"  model calls made: {model_calls}; "
          + (without or f"max_steps alone would have allowed {max_steps + 1} (max_steps + the final-answer call)"))
    print(f"  spans exported: {len(spans)}, {len(marked)} with trip attributes, {errors} with status ERROR")
    print("span tree (InMemorySpanExporter):")
    print_span_tree(spans)
