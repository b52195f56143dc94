"""An agent traced by OpenLIT: ``openlit.init()``, then a plain loop around the OpenAI or Anthropic client (its calls
traced by the instrumentation ``openlit.init()`` switches on); the tool is a plain function, so the loop shows only in
the requests. One scenario per process (``openlit.init()`` sets the global provider once); spans also go to an
in-memory exporter on that provider. The last stdout line is a JSON summary.

    python tests/openlit_init/app.py [--client openai|anthropic|groq|ollama|google-genai] [--script stuck|healthy]
        [--content on|off]
        [--attach instrument|instrument-first|none] [--span] [--asynchronous] [--max-model-calls N] [--runs N]
        [--frameworks NAME,...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: the agent's loop
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))  # the scripted model
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the tier's shared summary

from traced import summary_of

from tests.clients.apps import APPS
from tests.decorated_agent import QUERIES, TURNS, aresearch, research, script_for

CLIENT_APPS = ("groq", "ollama", "google-genai")
"""The clients whose application side ``tests/clients/apps.py`` writes once for every instrumentor's tier."""

ANTHROPIC_MODEL = "claude-sonnet-4-5"
ANTHROPIC_TOOLS: Any = [{"name": "search",
                         "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}}]


def anthropic_research(client: Any, search: Any, question: str) -> str:
    """:func:`research` written for Anthropic's Messages API (``tool_use`` / ``tool_result`` blocks)."""
    messages: list[Any] = [{"role": "user", "content": question}]
    for _ in range(TURNS):
        reply = client.messages.create(model=ANTHROPIC_MODEL, max_tokens=256, messages=messages,
                                       tools=ANTHROPIC_TOOLS)
        uses = [block for block in reply.content if block.type == "tool_use"]
        if not uses:
            return "".join(block.text for block in reply.content if block.type == "text")
        messages.append({"role": "assistant", "content": reply.content})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": use.id, "content": search(**use.input)} for use in uses]})
    return "gave up"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--client", choices=("openai", "anthropic", *CLIENT_APPS), default="openai")
    parser.add_argument("--script", choices=("stuck", "healthy"), default="stuck")
    parser.add_argument("--content", choices=("on", "off"), default="on")
    parser.add_argument("--attach", choices=("instrument", "instrument-first", "none"), default="instrument",
                        help="spanbreaker.instrument() after openlit.init(), before it, or not at all")
    parser.add_argument("--span", action="store_true", help="a span of the application's around the loop")
    parser.add_argument("--asynchronous", action="store_true", help="the async OpenAI client")
    parser.add_argument("--max-model-calls", type=int)
    parser.add_argument("--runs", type=int, default=1, help="run the agent this many times, one after the other")
    parser.add_argument("--frameworks", help="spanbreaker.instrument(frameworks=...): the adapters to use")
    args = parser.parse_args()
    os.environ["OTEL_TRACES_EXPORTER"] = "none"  # OpenLIT's default would print every span to stdout

    import anthropic
    import openai
    import openlit
    from _scripted_openai import ScriptedModel
    from opentelemetry import trace
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    import spanbreaker

    config = spanbreaker.BreakerConfig.load().replace(
        **({"max_model_calls": args.max_model_calls} if args.max_model_calls else {}))
    frameworks: dict[str, Any] = {"frameworks": args.frameworks.split(",")} if args.frameworks else {}
    if args.attach == "instrument-first":
        spanbreaker.instrument(config=config, **frameworks)  # sets an SDK provider: openlit.init() then reuses it
    openlit.init(application_name="research", disable_batch=True, disable_metrics=True, disable_events=True,
                 capture_message_content=args.content == "on")
    provider: Any = trace.get_tracer_provider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    if args.attach == "instrument":
        spanbreaker.instrument(config=config, **frameworks)  # the global provider openlit.init() set

    model = ScriptedModel(script_for(args.script), model=ANTHROPIC_MODEL if args.client == "anthropic" else
                          "gpt-4o-mini")
    ran = {"tool": 0}

    def search(query: str) -> str:
        ran["tool"] += 1
        return f"page about {query}"

    async def asearch(query: str) -> str:
        return search(query)

    if args.client in CLIENT_APPS:
        app = APPS[args.client]
        model = ScriptedModel(script_for(args.script), model=app.model)

        def run(question: str) -> str:
            with contextlib.ExitStack() as stack:
                connection = app.connect(model, stack)
                history: list[Any] = [app.first(question)]
                for _ in range(TURNS):
                    calls = app.turn(connection, app.model, history)
                    if not calls:
                        return "answered"
                    app.append(history, calls, [search(**arguments) for _, _, arguments in calls])
            return "gave up"
    elif args.client == "anthropic":
        client = model.client(anthropic.Anthropic, api_key="offline", base_url="http://scripted.invalid")

        def run(question: str) -> str:
            return anthropic_research(client, search, question)
    elif args.asynchronous:
        aclient = model.client(openai.AsyncOpenAI, api_key="offline", base_url="http://scripted.invalid/v1",
                               asynchronous=True)

        def run(question: str) -> str:
            return asyncio.run(aresearch(aclient, asearch, question))
    else:
        oclient = model.client(openai.OpenAI, api_key="offline", base_url="http://scripted.invalid/v1")

        def run(question: str) -> str:
            return research(oclient, search, question)

    summary: dict[str, Any] = {"outcome": "answered", "detector": None, "runs": []}
    tracer = trace.get_tracer("research-app")
    for _ in range(args.runs):
        try:
            with tracer.start_as_current_span("research") if args.span else nullcontext():
                run("What is Acme's guidance?")
            summary["runs"].append("answered")
        except spanbreaker.Tripped as trip:
            summary.update(outcome="stopped", detector=trip.detector)
            summary["runs"].append("blocked at once" if trip.blocked else f"stopped after {model.calls} model calls")
    spans = exporter.get_finished_spans()
    calls = [s for s in spans if s.name.startswith("chat ")]
    summary.update(
        model_calls=model.calls, tool_calls=ran["tool"], queries=len(QUERIES),
        traces=len({s.context.trace_id for s in spans}), call_spans=len(calls),
        with_messages=sum(1 for s in calls if "gen_ai.input.messages" in (s.attributes or {})), **summary_of(spans))
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
