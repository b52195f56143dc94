"""An agent written as a plain loop around the OpenAI client (no agent framework, no tool spans) asks for the same
search again and again; spanbreaker stops it from the model call spans alone. Offline: the model is scripted.

The OpenInference OpenAI instrumentor records each ``chat.completions.create`` as a model call span whose input
is the request. The loop is in those requests: each ends with the model's previous tool calls and their results.
The application opens no span of its own, so each model call is a trace of its own; its request holds the whole
run since the question, which is what the breaker reads. With ``--litellm`` the same loop calls
``litellm.completion`` (LiteLLM's OpenAI route), traced by OpenInference's LiteLLM instrumentor, which
``spanbreaker.instrument()`` switches on with its adapter. With ``--bedrock`` the loop is boto3's
``bedrock-runtime`` ``converse`` with a ``toolConfig`` (``toolUse`` blocks, ``toolResult`` blocks), traced by
OpenInference's Bedrock instrumentor, which ``spanbreaker.instrument()`` also switches on with its adapter; the
scripted model then answers on loopback (boto3 has its own HTTP stack) with dummy credentials.

    python examples/openai_tool_loop.py [--litellm | --bedrock]
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import openai
from _report import print_trip
from _scripted_openai import ScriptedModel
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

TURN_LIMIT = 30
TOOLS = [{"type": "function", "function": {
    "name": "web_search", "description": "Search the web.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}]
counts = {"web_search": 0}


def web_search(query: str) -> str:
    counts["web_search"] += 1
    return "Acme Corp investor relations: guidance for 2026 will be published in March."


def run_agent(client: openai.OpenAI, question: str, through_litellm: bool = False) -> str:
    """The whole agent: ask, run the tools the model asks for, send the results back, until it answers."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(TURN_LIMIT):
        if through_litellm:
            import litellm

            reply = litellm.completion(model="openai/gpt-4o-mini", messages=messages, tools=TOOLS, client=client)
        else:
            reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = web_search(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return "(turn limit reached)"


BEDROCK_TOOLS = {"tools": [{"toolSpec": {
    "name": "web_search", "description": "Search the web.",
    "inputSchema": {"json": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}}]}


def run_bedrock_agent(client: Any, question: str) -> str:
    """The same agent around Bedrock's Converse API: ``toolUse`` blocks in, ``toolResult`` blocks back."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": question}]}]
    for _ in range(TURN_LIMIT):
        message = client.converse(modelId="anthropic.claude-3-5-sonnet-20240620-v1:0", messages=messages,
                                  toolConfig=BEDROCK_TOOLS)["output"]["message"]
        uses = [block["toolUse"] for block in message["content"] if "toolUse" in block]
        if not uses:
            return "".join(block.get("text", "") for block in message["content"])
        messages.append(message)
        messages.append({"role": "user", "content": [{"toolResult": {
            "toolUseId": use["toolUseId"], "content": [{"text": web_search(**use["input"])}], "status": "success"}}
            for use in uses]})
    return "(turn limit reached)"


def bedrock_main(provider: TracerProvider, exporter: InMemorySpanExporter, model: ScriptedModel) -> None:
    import boto3

    with model.serve() as url:  # dummy credentials: the scripted model checks none
        client = boto3.client("bedrock-runtime", endpoint_url=url, region_name="us-east-1",
                              aws_access_key_id="offline", aws_secret_access_key="offline")
        print(f"Asking a hand-written tool loop around Bedrock's converse for Acme's guidance (turn limit "
              f"{TURN_LIMIT}) ...")
        try:
            run_bedrock_agent(client, "What is Acme's 2026 revenue guidance?")
            print("The agent finished without being stopped.")
        except spanbreaker.Tripped as trip:
            print_trip(trip, exporter, f"model calls made: {model.calls}, web_search ran {counts['web_search']} "
                       f"times (the turn limit alone would allow {TURN_LIMIT})")


def main() -> None:
    if "--bedrock" in sys.argv[1:]:
        provider = TracerProvider()
        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        spanbreaker.instrument(tracer_provider=provider)  # Bedrock included, with its adapter, once boto3 is imported
        bedrock_main(provider, exporter, ScriptedModel(lambda messages: [
            ("web_search", {"query": "acme 2026 revenue guidance"})]))  # stuck
        return
    through_litellm = "--litellm" in sys.argv[1:]
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline: LiteLLM's own copy of its price map
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spanbreaker.instrument(tracer_provider=provider)  # LiteLLM included, with its adapter, once it is imported
    if not through_litellm:
        OpenAIInstrumentor().instrument(tracer_provider=provider)  # the client's spans, here

    model = ScriptedModel(lambda messages: [("web_search", {"query": "acme 2026 revenue guidance"})])  # stuck
    client = model.client(openai.OpenAI, api_key="offline", base_url="http://scripted.invalid/v1")
    via = "litellm.completion" if through_litellm else "the OpenAI client"
    print(f"Asking a hand-written tool loop around {via} for Acme's guidance (turn limit {TURN_LIMIT}) ...")
    try:
        run_agent(client, "What is Acme's 2026 revenue guidance?", through_litellm)
        print("The agent finished without being stopped.")
    except spanbreaker.Tripped as trip:
        print_trip(trip, exporter, f"model calls made: {model.calls}, web_search ran {counts['web_search']} times "
                   f"(the turn limit alone would allow {TURN_LIMIT})")
    finally:
        if not through_litellm:
            OpenAIInstrumentor().uninstrument()


if __name__ == "__main__":
    main()
