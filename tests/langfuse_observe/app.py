"""An agent traced by Langfuse (its Python SDK on OpenTelemetry): the agent and its tool marked with ``@observe`` (as
``agent`` and ``tool``), a loop around the OpenAI client through Langfuse's drop-in (``from langfuse.openai import
openai``: each request a ``generation``). Nothing is sent to a Langfuse server (``should_export_span`` refuses every
span); an in-memory exporter on the same provider receives them. One scenario per process; the last stdout line is a
JSON summary.

    python tests/langfuse_observe/app.py [--script stuck|healthy] [--asynchronous] [--max-tool-calls N]
        [--max-model-calls N] [--max-tokens N] [--capture-input off] [--capture-output off] [--tool-observed off]
        [--runs N] [--adapters none]

``--tool-observed off``: the tool is a plain function (no observation of its own), so the loop is known only from the
requests Langfuse's OpenAI integration records.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: the agent's loop
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))  # the scripted model

from tests.decorated_agent import aresearch, research, script_for, spans_summary


def define(asynchronous: bool, client: Any, ran: dict[str, int], capture_input: bool, capture_output: bool,
           tool_observed: bool) -> Any:
    from langfuse import observe

    def tool(function: Any) -> Any:
        if not tool_observed:
            return function
        return observe(as_type="tool", name="search", capture_input=capture_input,
                       capture_output=capture_output)(function)

    if asynchronous:
        @tool
        async def asearch(query: str) -> str:
            ran["tool"] += 1
            return f"page about {query}"

        @observe(as_type="agent", name="researcher")
        async def arun(question: str) -> str:
            return await aresearch(client, asearch, question)

        return lambda question: asyncio.run(arun(question))

    @tool
    def search(query: str) -> str:
        ran["tool"] += 1
        return f"page about {query}"

    @observe(as_type="agent", name="researcher")
    def run(question: str) -> str:
        return research(client, search, question)

    return run


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", choices=("stuck", "healthy"), default="stuck")
    parser.add_argument("--asynchronous", action="store_true")
    parser.add_argument("--max-tool-calls", type=int)
    parser.add_argument("--max-model-calls", type=int)
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument("--capture-input", choices=("on", "off"), default="on")
    parser.add_argument("--capture-output", choices=("on", "off"), default="on")
    parser.add_argument("--tool-observed", choices=("on", "off"), default="on")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--adapters", choices=("all", "none"), default="all",
                        help="none: the breaker attached, no adapter (Langfuse as it ships)")
    args = parser.parse_args()

    from _scripted_openai import ScriptedModel
    from langfuse import Langfuse
    from langfuse.openai import openai
    from opentelemetry import trace
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    import spanbreaker

    Langfuse(public_key="pk-lf-offline", secret_key="sk-lf-offline", host="http://127.0.0.1:9",
             should_export_span=lambda span: False)  # sets the global provider; sends nothing
    limits = {key: value for key, value in (("max_tool_calls", args.max_tool_calls),
                                            ("max_model_calls", args.max_model_calls),
                                            ("max_tokens", args.max_tokens)) if value}
    spanbreaker.instrument(config=spanbreaker.BreakerConfig.load().replace(**limits),
                           **({"frameworks": []} if args.adapters == "none" else {}))
    exporter = InMemorySpanExporter()
    trace.get_tracer_provider().add_span_processor(SimpleSpanProcessor(exporter))  # type: ignore[attr-defined]
    model = ScriptedModel(script_for(args.script))
    client = model.client(openai.AsyncOpenAI if args.asynchronous else openai.OpenAI, api_key="offline",
                          base_url="http://scripted.invalid/v1", asynchronous=args.asynchronous)
    ran = {"tool": 0}
    run = define(args.asynchronous, client, ran, args.capture_input == "on", args.capture_output == "on",
                 args.tool_observed == "on")
    summary: dict[str, Any] = {"outcome": "answered", "detector": None, "runs": []}
    for _ in range(args.runs):
        try:
            run("What is Acme's guidance?")
            summary["runs"].append("answered")
        except spanbreaker.Tripped as trip:
            summary.update(outcome="stopped", detector=trip.detector)
            summary["runs"].append(f"stopped after {model.calls} model calls")
    spans = exporter.get_finished_spans()
    summary.update(model_calls=model.calls, tool_calls=ran["tool"],
                   **spans_summary(spans, "researcher", "search", "langfuse.observation.input"),
                   outputs=sum(1 for span in spans if span.name == "search"
                               and (span.attributes or {}).get("langfuse.observation.output")))
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
