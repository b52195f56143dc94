"""An agent written on the Traceloop SDK (OpenLLMetry): ``Traceloop.init()``, the agent and its tool marked with the
SDK's ``@agent`` and ``@tool`` decorators, a plain loop around the OpenAI client (its calls traced by the OpenAI
instrumentation ``Traceloop.init()`` switches on). One scenario per process (``Traceloop.init()`` sets the global
provider once); spans go to an in-memory exporter (``Traceloop.init(exporter=...)``). The last stdout line is a JSON
summary.

    python tests/traceloop_decorators/app.py [--script stuck|healthy] [--content on|off]
        [--attach instrument|instrument-first|none] [--decorate before|after] [--max-tool-calls N]
        [--max-model-calls N] [--asynchronous] [--runs N] [--frameworks NAME,...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: the agent's loop
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))  # the scripted model

from tests.decorated_agent import aresearch, research, script_for, spans_summary


def define(asynchronous: bool, client: Any, ran: dict[str, int]) -> Any:
    """The agent and its tool, decorated with the SDK's decorators (at whatever time this is called)."""
    from traceloop.sdk.decorators import agent, tool

    if asynchronous:
        @tool(name="search")
        async def asearch(query: str) -> str:
            ran["tool"] += 1
            return f"page about {query}"

        @agent(name="researcher")
        async def arun(question: str) -> str:
            return await aresearch(client, asearch, question)

        return lambda question: asyncio.run(arun(question))

    @tool(name="search")
    def search(query: str) -> str:
        ran["tool"] += 1
        return f"page about {query}"

    @agent(name="researcher")
    def run(question: str) -> str:
        return research(client, search, question)

    return run


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", choices=("stuck", "healthy"), default="stuck")
    parser.add_argument("--content", choices=("on", "off"), default="on")
    parser.add_argument("--attach", choices=("instrument", "instrument-first", "none"), default="instrument",
                        help="spanbreaker.instrument() after Traceloop.init(), before it, or not at all")
    parser.add_argument("--decorate", choices=("before", "after"), default="after",
                        help="decorate the functions before or after spanbreaker.instrument()")
    parser.add_argument("--max-tool-calls", type=int)
    parser.add_argument("--max-model-calls", type=int)
    parser.add_argument("--asynchronous", action="store_true")
    parser.add_argument("--runs", type=int, default=1, help="run the agent this many times, one after the other")
    parser.add_argument("--frameworks", help="spanbreaker.instrument(frameworks=...): the adapters to use")
    args = parser.parse_args()
    os.environ["TRACELOOP_TRACE_CONTENT"] = "true" if args.content == "on" else "false"

    import openai
    from _scripted_openai import ScriptedModel
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from traceloop.sdk import Traceloop

    import spanbreaker

    config = spanbreaker.BreakerConfig.load().replace(
        **({"max_tool_calls": args.max_tool_calls} if args.max_tool_calls else {}),
        **({"max_model_calls": args.max_model_calls} if args.max_model_calls else {}))
    frameworks: dict[str, Any] = {"frameworks": args.frameworks.split(",")} if args.frameworks else {}
    if args.attach == "instrument-first":
        spanbreaker.instrument(config=config, **frameworks)  # sets an SDK provider: Traceloop.init() then uses it
    exporter = InMemorySpanExporter()
    Traceloop.init(app_name="research", exporter=exporter, disable_batch=True, telemetry_enabled=False)
    model = ScriptedModel(script_for(args.script))
    client = model.client(openai.AsyncOpenAI if args.asynchronous else openai.OpenAI, api_key="offline",
                          base_url="http://scripted.invalid/v1", asynchronous=args.asynchronous)
    ran = {"tool": 0}
    run = define(args.asynchronous, client, ran) if args.decorate == "before" else None
    if args.attach == "instrument":
        spanbreaker.instrument(config=config, **frameworks)  # the global provider Traceloop.init() set
    if run is None:
        run = define(args.asynchronous, client, ran)
    summary: dict[str, Any] = {"outcome": "answered", "detector": None, "runs": []}
    for _ in range(args.runs):
        try:
            run("What is Acme's guidance?")
            summary["runs"].append("answered")
        except spanbreaker.Tripped as trip:
            summary.update(outcome="stopped", detector=trip.detector)
            summary["runs"].append("blocked at once" if trip.blocked else f"stopped after {model.calls} model calls")
    spans = exporter.get_finished_spans()
    summary.update(model_calls=model.calls, tool_calls=ran["tool"],
                   **spans_summary(spans, "researcher.agent", "search.tool", "traceloop.entity.input"))
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
