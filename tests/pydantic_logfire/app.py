"""A plain tool loop around the OpenAI or Anthropic client traced by Pydantic Logfire (``logfire.instrument_openai()`` /
``instrument_anthropic()``), one scenario per process (``logfire.configure()`` sets the global provider once): the
breaker attached as Logfire's docs attach any processor (``additional_span_processors``) or by
``spanbreaker.instrument()`` on the global provider Logfire set. Nothing is sent anywhere (``send_to_logfire=False``);
an in-memory exporter after the breaker receives the spans. The last stdout line is a JSON summary.

    python tests/pydantic_logfire/app.py --attach additional|instrument --api chat|chat_stream|anthropic [--no-span]
        [--script stuck|healthy] [--max-model-calls N] [--max-tokens N] [--version 1]
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: the plain-loop requests
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))  # the scripted model

import anthropic
import logfire
from _scripted_openai import ScriptedModel, tool_results
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
from tests.openai_client.loop import chat_completion, client_for, streamed_chat_completion

TURNS = 10
QUERIES = ["acme guidance", "acme revenue", "acme ceo", "acme plants", "acme debt"]
ANTHROPIC_TOOLS: Any = [{"name": "search", "input_schema": {"type": "object",
                                                            "properties": {"query": {"type": "string"}}}}]


def script_for(name: str) -> Any:
    if name == "stuck":
        return lambda messages: [("search", {"query": "same"})]
    return lambda messages: ("Acme's answer." if tool_results(messages) >= len(QUERIES)
                             else [("search", {"query": QUERIES[tool_results(messages)]})])


def chat(model: ScriptedModel, stream: bool, calls: dict[str, int]) -> None:
    """The plain-loop tests' requests (``tests/openai_client/loop.py``), streamed or not."""
    client = client_for(model)
    create = streamed_chat_completion if stream else chat_completion
    messages: list[Any] = [{"role": "user", "content": "find it"}]
    for _ in range(TURNS):
        message = create(client, messages).choices[0].message
        if not message.tool_calls:
            return
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            calls["tool"] += 1
            query = json.loads(call.function.arguments).get("query")
            messages.append({"role": "tool", "tool_call_id": call.id, "content": f"page about {query}"})


def messages_api(model: ScriptedModel, calls: dict[str, int]) -> None:
    client = model.client(anthropic.Anthropic, api_key="offline", base_url="http://scripted.invalid")
    messages: list[Any] = [{"role": "user", "content": "find it"}]
    for _ in range(TURNS):
        reply = client.messages.create(model="claude-sonnet-4-5", max_tokens=512, messages=messages,
                                       tools=ANTHROPIC_TOOLS)
        uses = [block for block in reply.content if block.type == "tool_use"]
        if not uses:
            return
        messages.append({"role": "assistant", "content": [block.model_dump(exclude_none=True)
                                                            for block in reply.content]})
        calls["tool"] += len(uses)
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": use.id, "content": f"page about {use.input.get('query')}"}
            for use in uses]})


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--attach", choices=("additional", "instrument"), default="additional")
    parser.add_argument("--api", choices=("chat", "chat_stream", "anthropic"), default="chat")
    parser.add_argument("--no-span", action="store_true")
    parser.add_argument("--script", choices=("stuck", "healthy"), default="stuck")
    parser.add_argument("--max-model-calls", type=int)
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument("--version", type=int, help="Logfire's message format (instrument_*(version=...))")
    args = parser.parse_args()
    config = spanbreaker.BreakerConfig.load().replace(
        **({"max_model_calls": args.max_model_calls} if args.max_model_calls else {}),
        **({"max_tokens": args.max_tokens} if args.max_tokens else {}))
    exporter = InMemorySpanExporter()
    if args.attach == "additional":
        logfire.configure(send_to_logfire=False, console=False, additional_span_processors=[
            spanbreaker.BreakerSpanProcessor(config), SimpleSpanProcessor(exporter)])
    else:
        logfire.configure(send_to_logfire=False, console=False,
                          additional_span_processors=[SimpleSpanProcessor(exporter)])
        spanbreaker.instrument(config=config)  # the global provider: Logfire's proxy
    version: Any = {"version": args.version} if args.version else {}
    logfire.instrument_openai(**version)
    logfire.instrument_anthropic(**version)
    model = ScriptedModel(script_for(args.script))
    calls = {"tool": 0}
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    try:
        with nullcontext() if args.no_span else logfire.span("research"):
            if args.api == "anthropic":
                messages_api(model, calls)
            else:
                chat(model, args.api == "chat_stream", calls)
    except spanbreaker.Tripped as trip:
        summary.update(outcome="stopped", exception=type(trip).__name__, detector=trip.detector)
    spans = exporter.get_finished_spans()
    summary.update(
        model_calls=model.calls, tool_calls=calls["tool"],
        blocked=[span.name for span in spans if (span.attributes or {}).get("spanbreaker.blocked")],
        tripped=sum(1 for span in spans if (span.attributes or {}).get("spanbreaker.tripped")),
        processor=spanbreaker.processor_for() is not None)
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
