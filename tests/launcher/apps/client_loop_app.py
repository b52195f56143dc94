"""A plain tool loop around a model client, knowing nothing about spanbreaker: ``opentelemetry-instrument python
client_loop_app.py``, with ``LAUNCHER_APP_CLIENT`` = ``openai`` (the default), ``anthropic``, ``litellm``,
``google-genai``, ``bedrock``, ``groq``, ``mistralai`` or ``ollama``.

No agent framework: the application calls the client with tools (OpenAI's ``chat.completions.create``,
Anthropic's ``messages.create``, ``litellm.completion``, Gemini's ``generate_content``, boto3's
``bedrock-runtime`` ``converse``, Groq's ``chat.completions.create``, Mistral's ``chat.complete``, Ollama's
``chat``), runs the search the model asks for and sends the result back, inside one span of its own
(``LAUNCHER_APP_SPAN=none``: with no span around the loop, each model call a trace of its own). The launcher loads
the client's OpenInference instrumentor (the extra of the same name brings it; with the ``[openai-v2]`` or
``[openllmetry-openai]`` extra, OpenTelemetry's own or OpenLLMetry's OpenAI instrumentor) and spanbreaker; the model
keeps asking for the same search, the breaker reads the loop from the model calls' prompts and
``spanbreaker.Tripped`` comes out of the client's call. A scripted model (an in-process HTTP transport; for boto3,
which has its own HTTP stack, and Ollama, a server on loopback) stands in for the LLM. The last stdout line is a JSON
summary, the same keys as ``examples/launcher_app.py``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import ExitStack, nullcontext
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the summary helper
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))  # the scripted model

from _scripted_openai import ScriptedModel
from opentelemetry import trace

from tests.launcher.apps._report import note_stop, report

PAGE = "Acme Corp investor relations: guidance for 2026 comes in March."
QUESTION = "What is Acme's 2026 revenue guidance?"
calls = {"tool": 0}
SERVED = ExitStack()
"""Scripted models served on loopback for the run (Bedrock's), closed when it ends."""


def openai_turn(model: ScriptedModel, through_litellm: bool = False) -> Callable[[list[Any]], bool]:
    """One turn of the OpenAI loop: ask, run the calls, append the results; False once the model answers.
    ``through_litellm``: the request goes through ``litellm.completion`` (LiteLLM's OpenAI route, this client)."""
    import openai

    client = model.client(openai.OpenAI, api_key="offline", base_url="http://scripted.invalid/v1")
    tools: Any = [{"type": "function", "function": {"name": "web_search", "parameters": {
        "type": "object", "properties": {"query": {"type": "string"}}}}}]

    def create(messages: list[Any]) -> Any:
        if through_litellm:
            import litellm

            return litellm.completion(model="openai/gpt-4o-mini", messages=messages, tools=tools, client=client)
        return client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)

    def turn(messages: list[Any]) -> bool:
        message = create(messages).choices[0].message
        if not message.tool_calls:
            return False
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            calls["tool"] += 1
            messages.append({"role": "tool", "tool_call_id": call.id, "content": PAGE})
        return True
    return turn


def anthropic_turn(model: ScriptedModel) -> Callable[[list[Any]], bool]:
    """The same turn with the Anthropic client: tool_use blocks, tool_result blocks."""
    import anthropic

    client = model.client(anthropic.Anthropic, api_key="offline", base_url="http://scripted.invalid")
    tools: Any = [{"name": "web_search", "input_schema": {"type": "object",
                                                          "properties": {"query": {"type": "string"}}}}]

    def turn(messages: list[Any]) -> bool:
        reply = client.messages.create(model="claude-sonnet-4-5", max_tokens=512, messages=messages, tools=tools)
        uses = [block for block in reply.content if block.type == "tool_use"]
        if not uses:
            return False
        messages.append({"role": "assistant", "content": reply.content})
        calls["tool"] += len(uses)
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": use.id, "content": PAGE} for use in uses]})
        return True
    return turn


def gemini_turn(model: ScriptedModel) -> Callable[[list[Any]], bool]:
    """The same turn with Google's Gen AI client: a function declaration, function responses."""
    from google import genai
    from google.genai import types

    client = model.client(lambda http_client: genai.Client(api_key="offline", http_options=types.HttpOptions(
        base_url="http://scripted.invalid", httpx_client=http_client)), libraries=("httpx2",))
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
        name="web_search", parameters={"type": "object", "properties": {"query": {"type": "string"}}})])])

    def turn(contents: list[Any]) -> bool:
        reply = client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)
        if not reply.function_calls:
            return False
        contents.append(reply.candidates[0].content)  # type: ignore[index]
        calls["tool"] += len(reply.function_calls)
        contents.extend(types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            name=call.name, response={"result": PAGE}))]) for call in reply.function_calls)
        return True
    return turn


def bedrock_turn(model: ScriptedModel) -> Callable[[list[Any]], bool]:
    """The same turn with boto3's ``bedrock-runtime`` client: ``converse`` with a ``toolConfig``, ``toolUse``
    blocks, ``toolResult`` blocks. Dummy credentials: the scripted model on loopback checks none."""
    import boto3

    url = SERVED.enter_context(model.serve())
    client = boto3.client("bedrock-runtime", endpoint_url=url, region_name="us-east-1",
                          aws_access_key_id="offline", aws_secret_access_key="offline")
    tools = {"tools": [{"toolSpec": {"name": "web_search", "inputSchema": {"json": {
        "type": "object", "properties": {"query": {"type": "string"}}}}}}]}

    def turn(messages: list[Any]) -> bool:
        message = client.converse(modelId="anthropic.claude-3-5-sonnet-20240620-v1:0", messages=messages,
                                  toolConfig=tools)["output"]["message"]
        uses = [block["toolUse"] for block in message["content"] if "toolUse" in block]
        if not uses:
            return False
        messages.append(message)
        calls["tool"] += len(uses)
        messages.append({"role": "user", "content": [
            {"toolResult": {"toolUseId": use["toolUseId"], "content": [{"text": PAGE}]}} for use in uses]})
        return True
    return turn


def chat_turn(create: Callable[[list[Any]], Any]) -> Callable[[list[Any]], bool]:
    """The OpenAI-shaped turn for a client of the same wire format (Groq's, Mistral's): ``create(messages)``."""
    def turn(messages: list[Any]) -> bool:
        message = create(messages).choices[0].message
        if not message.tool_calls:
            return False
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.function.name,
                                                             "arguments": call.function.arguments}}
            for call in message.tool_calls]})
        for call in message.tool_calls:
            calls["tool"] += 1
            messages.append({"role": "tool", "tool_call_id": call.id, "content": PAGE})
        return True
    return turn


SEARCH_TOOL: Any = [{"type": "function", "function": {"name": "web_search", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}}}}]


def groq_turn(model: ScriptedModel) -> Callable[[list[Any]], bool]:
    import groq

    client = model.client(groq.Groq, api_key="offline", base_url="http://scripted.invalid", max_retries=0)
    return chat_turn(lambda messages: client.chat.completions.create(
        model="llama-3.3-70b-versatile", messages=messages, tools=SEARCH_TOOL))


def mistral_turn(model: ScriptedModel) -> Callable[[list[Any]], bool]:
    from mistralai.client import Mistral

    client = model.client(lambda http_client: Mistral(api_key="offline", server_url="http://scripted.invalid",
                                                      client=http_client))
    return chat_turn(lambda messages: client.chat.complete(model="mistral-large-latest", messages=messages,
                                                           tools=SEARCH_TOOL))


def ollama_turn(model: ScriptedModel) -> Callable[[list[Any]], bool]:
    """The same turn with Ollama's client (a server on loopback): tool calls without ids, results in order."""
    import ollama

    client = ollama.Client(host=SERVED.enter_context(model.serve()))

    def turn(messages: list[Any]) -> bool:
        message = client.chat(model="llama3.1", messages=messages, tools=SEARCH_TOOL).message
        if not message.tool_calls:
            return False
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": call.function.name, "arguments": dict(call.function.arguments)}}
            for call in message.tool_calls]})
        for call in message.tool_calls:
            calls["tool"] += 1
            messages.append({"role": "tool", "content": PAGE, "tool_name": call.function.name})
        return True
    return turn


TURNS: dict[str, Callable[[ScriptedModel], Callable[[list[Any]], bool]]] = {
    "openai": openai_turn, "anthropic": anthropic_turn, "litellm": lambda model: openai_turn(model, True),
    "google-genai": gemini_turn, "bedrock": bedrock_turn, "groq": groq_turn, "mistralai": mistral_turn,
    "ollama": ollama_turn}


def main() -> int:
    model = ScriptedModel(lambda messages: [("web_search", {"query": "acme 2026 revenue guidance"})])
    client = os.environ.get("LAUNCHER_APP_CLIENT", "openai")
    turn = TURNS[client](model)
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    messages: list[Any] = [{"role": "user", "parts": [{"text": QUESTION}]} if client == "google-genai" else
                           {"role": "user", "content": [{"text": QUESTION}]} if client == "bedrock" else
                           {"role": "user", "content": QUESTION}]
    try:
        around = nullcontext() if os.environ.get("LAUNCHER_APP_SPAN") == "none" else trace.get_tracer(
            "research-app").start_as_current_span("research", attributes={"openinference.span.kind": "AGENT"})
        with around:
            for _ in range(int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "8"))):
                if not turn(messages):
                    break
            else:
                summary["outcome"] = "limit"
    except BaseException as exc:
        note_stop(summary, exc)
    finally:
        SERVED.close()
    summary.update(tool_calls=calls["tool"], model_calls=model.calls)
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
