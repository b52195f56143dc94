"""A smolagents app that knows nothing about spanbreaker: run it under ``opentelemetry-instrument``.

    pip install 'spanbreaker[smolagents,otlp]'
    opentelemetry-instrument python examples/launcher_app.py

There is no ``import spanbreaker`` here on purpose: the launcher loads spanbreaker's ``opentelemetry_pre_instrument``
hook, which attaches the breaker to the tracer provider (the launcher's, or the one this app sets itself) and the
smolagents instrumentor emits the spans it watches. The agent searches for the same thing over and over with the
same empty answer; the breaker vetoes the fifth identical call and the run stops long before ``max_steps``.

Offline by default: a scripted model stands in for the LLM. With ``OPENAI_API_KEY`` set, a real model is used
instead (``LAUNCHER_APP_MODEL``, default ``gpt-4o-mini``) and the same looping tool keeps it busy.

Environment knobs (all optional):
    LAUNCHER_APP_OWN_PROVIDER=1   the app builds and sets its own TracerProvider (the no-configurator case);
                                  it exports to OTLP/HTTP when ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set.
    LAUNCHER_APP_HEALTHY=1        the healthy look-alike: new queries, new results, then a final answer.
    LAUNCHER_APP_MAX_STEPS        the agent's step limit (default 12).

The last line of stdout is a JSON summary (``outcome``, ``exception``, ``detector``, ``steps``, ``tool_calls``),
which the launcher tests read.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from opentelemetry import trace
from smolagents import ChatMessage, MessageRole, Model, TokenUsage, Tool, ToolCallingAgent
from smolagents.models import ChatMessageToolCall, ChatMessageToolCallFunction


class SearchTool(Tool):
    """A search index that has nothing on the topic: the looping agent keeps asking anyway."""

    name = "search"
    description = "Search the internal knowledge base."
    inputs = {"query": {"type": "string", "description": "what to look for"}}
    output_type = "string"
    calls = 0

    def forward(self, query: str) -> str:
        SearchTool.calls += 1
        if os.environ.get("LAUNCHER_APP_HEALTHY") == "1":
            return f"{SearchTool.calls} documents about {query}"
        return "No results."


class ScriptedModel(Model):
    """Stands in for the LLM: asks for the same search every step, or (healthy) new searches then an answer."""

    def __init__(self) -> None:
        super().__init__(model_id="scripted-model")
        self.calls = 0

    def generate(self, messages: Any, stop_sequences: Any = None, response_format: Any = None,
                 tools_to_call_from: Any = None, **kwargs: Any) -> ChatMessage:
        self.calls += 1
        healthy = os.environ.get("LAUNCHER_APP_HEALTHY") == "1"
        if healthy and self.calls > 3:
            name, arguments = "final_answer", {"answer": "found it"}
        else:
            query = f"topic {self.calls}" if healthy else "quarterly revenue 2019"
            name, arguments = "search", {"query": query}
        call = ChatMessageToolCall(
            id=f"call_{self.calls}", type="function",
            function=ChatMessageToolCallFunction(name=name, arguments=arguments),
        )
        return ChatMessage(role=MessageRole.ASSISTANT, content=None, tool_calls=[call],
                           token_usage=TokenUsage(input_tokens=200 + self.calls, output_tokens=20))


def build_model() -> Model:
    if os.environ.get("OPENAI_API_KEY"):
        from smolagents import OpenAIServerModel

        return OpenAIServerModel(model_id=os.environ.get("LAUNCHER_APP_MODEL", "gpt-4o-mini"))
    return ScriptedModel()


def set_own_provider() -> None:
    """What an app without a configurator does: build a provider, add its exporter, make it global."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create(
        {"service.name": os.environ.get("OTEL_SERVICE_NAME") or "launcher-app"}))
    if os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    else:
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
    trace.set_tracer_provider(provider)


def main() -> int:
    if os.environ.get("LAUNCHER_APP_OWN_PROVIDER") == "1":
        set_own_provider()
    agent = ToolCallingAgent(tools=[SearchTool()], model=build_model(),
                             max_steps=int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "12")), verbosity_level=0)
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    try:
        summary["answer"] = str(agent.run("What was our revenue in Q3 2019?"))
    except BaseException as exc:  # the breaker's stop is a BaseException: it must not look like a crash here
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        summary.update(outcome="stopped", exception=type(exc).__name__, detector=getattr(exc, "detector", None))
    summary.update(steps=len(agent.memory.steps), tool_calls=SearchTool.calls,
                   provider=type(trace.get_tracer_provider()).__name__)
    provider = trace.get_tracer_provider()
    if hasattr(provider, "force_flush"):
        provider.force_flush()
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
