"""The application side of a plain tool loop around a model client (Groq, Mistral, Ollama, Google Gen AI, Bedrock),
shared by the tiers that trace those clients with different instrumentors (OpenInference's in the dev tier,
``tests/clients``; OpenLLMetry's in its own, ``tests/openllmetry``): how the application connects, asks for a turn,
and appends the model's calls and their results to its history, each client in its own wire shape. The model is the
scripted one."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass
from typing import Any

from ..genai_rig import Rig
from ..openai_client.scripted import ScriptedModel

TURNS = 30
"""The application's own limit on model turns."""
SEARCH = {"type": "function", "function": {"name": "search", "description": "Search the web.", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}
Result = Callable[[dict[str, Any], int], str]
Calls = list[tuple[str | None, str, dict[str, Any]]]
"""(call id, tool name, arguments) per tool call of one model turn."""


@dataclass(frozen=True)
class App:
    """How the application talks to one client."""

    model: str
    connect: Callable[[ScriptedModel, ExitStack], Any]
    turn: Callable[[Any, str, list[Any]], Calls]
    """Ask the model with the history; the calls it asked for (none: it answered), its reply appended already
    where the client's own objects must go back (Gemini)."""
    append: Callable[[list[Any], Calls, list[str]], None]
    """The model's calls (where ``turn`` did not append them) and their results, as the application sends them."""
    first: Callable[[str], Any] = lambda text: {"role": "user", "content": text}


def _groq(model: ScriptedModel, _stack: ExitStack) -> Any:
    import groq

    return model.client(groq.Groq, api_key="offline", base_url="http://scripted.invalid", max_retries=0)


def _mistral(model: ScriptedModel, _stack: ExitStack) -> Any:
    from mistralai.client import Mistral

    return model.client(lambda http_client: Mistral(api_key="offline", server_url="http://scripted.invalid",
                                                    client=http_client))


def _ollama(model: ScriptedModel, stack: ExitStack) -> Any:
    import ollama

    return ollama.Client(host=stack.enter_context(model.serve()))


def _gemini(model: ScriptedModel, _stack: ExitStack) -> Any:
    from google import genai
    from google.genai import types

    return model.client(lambda http_client: genai.Client(api_key="offline", http_options=types.HttpOptions(
        base_url="http://scripted.invalid", httpx_client=http_client)), libraries=("httpx2",))


def _bedrock(model: ScriptedModel, stack: ExitStack) -> Any:
    """A real boto3 ``bedrock-runtime`` client pointed at the scripted model on loopback (dummy credentials)."""
    import boto3
    from botocore.config import Config

    return boto3.client("bedrock-runtime", endpoint_url=stack.enter_context(model.serve()), region_name="us-east-1",
                        aws_access_key_id="offline", aws_secret_access_key="offline",
                        config=Config(retries={"max_attempts": 1}))


def openai_turn(create: Callable[[Any], Callable[..., Any]]) -> Callable[[Any, str, list[Any]], Calls]:
    """A turn of a client in OpenAI's Chat Completions shape: ``create(client)`` is its chat method."""
    def turn(client: Any, model: str, messages: list[Any]) -> Calls:
        message = create(client)(model=model, messages=messages, tools=[SEARCH]).choices[0].message
        return [(call.id, call.function.name, json.loads(call.function.arguments)) for call in message.tool_calls or ()]
    return turn


def openai_append(messages: list[Any], calls: Calls, results: list[str]) -> None:
    messages.append({"role": "assistant", "content": "", "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        for call_id, name, arguments in calls]})
    messages.extend({"role": "tool", "tool_call_id": call_id, "name": name, "content": result}
                    for (call_id, name, _), result in zip(calls, results, strict=True))


def _ollama_turn(client: Any, model: str, messages: list[Any]) -> Calls:
    message = client.chat(model=model, messages=messages, tools=[SEARCH]).message
    return [(None, call.function.name, dict(call.function.arguments)) for call in message.tool_calls or ()]


def _ollama_append(messages: list[Any], calls: Calls, results: list[str]) -> None:
    """As Ollama's documentation shows it: the assistant's calls, then one ``tool`` message per call, in order."""
    messages.append({"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": name, "arguments": arguments}} for _, name, arguments in calls]})
    messages.extend({"role": "tool", "content": result, "tool_name": name}
                    for (_, name, _), result in zip(calls, results, strict=True))


def _gemini_turn(client: Any, model: str, contents: list[Any]) -> Calls:
    from google.genai import types

    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
        name="search", parameters=SEARCH["function"]["parameters"])])])  # type: ignore[index]
    reply = client.models.generate_content(model=model, contents=contents, config=config)
    if not reply.function_calls:
        return []
    contents.append(reply.candidates[0].content)  # the model's turn as it came back
    return [(call.id, call.name, dict(call.args or {})) for call in reply.function_calls]


def _gemini_append(contents: list[Any], calls: Calls, results: list[str]) -> None:
    from google.genai import types

    contents.append(types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
        id=call_id, name=name, response={"result": result})) for (call_id, name, _), result in zip(
            calls, results, strict=True)]))


def _bedrock_turn(client: Any, model: str, messages: list[Any]) -> Calls:
    tools = {"tools": [{"toolSpec": {"name": "search", "inputSchema": {"json": SEARCH["function"]["parameters"]}}}]}
    message = client.converse(modelId=model, messages=messages, toolConfig=tools)["output"]["message"]
    uses = [block["toolUse"] for block in message["content"] if "toolUse" in block]
    if uses:
        messages.append(message)  # the model's turn as it came back
    return [(use["toolUseId"], use["name"], dict(use["input"])) for use in uses]


def _bedrock_append(messages: list[Any], calls: Calls, results: list[str]) -> None:
    messages.append({"role": "user", "content": [{"toolResult": {"toolUseId": call_id, "content": [{"text": result}]}}
                                                 for (call_id, _, _), result in zip(calls, results, strict=True)]})


APPS = {
    "groq": App("llama-3.3-70b-versatile", _groq, openai_turn(lambda c: c.chat.completions.create), openai_append),
    "mistralai": App("mistral-large-latest", _mistral, openai_turn(lambda c: c.chat.complete), openai_append),
    "ollama": App("llama3.1", _ollama, _ollama_turn, _ollama_append),
    "google-genai": App("gemini-2.5-flash", _gemini, _gemini_turn, _gemini_append,
                        lambda text: {"role": "user", "parts": [{"text": text}]}),
    "bedrock": App("anthropic.claude-3-5-sonnet-20240620-v1:0", _bedrock, _bedrock_turn, _bedrock_append,
                   lambda text: {"role": "user", "content": [{"text": text}]}),
}


def run_loop(rig: Rig, app: App, model: ScriptedModel, result: Result, *, wrap: bool = True) -> int:
    """The application's agent: the client with a tool until the model answers; returns the tools run."""
    messages: list[Any] = [app.first("find it")]
    ran = 0
    with ExitStack() as stack:
        connection = app.connect(model, stack)
        with rig.provider.get_tracer("app").start_as_current_span("research") if wrap else nullcontext():
            for _ in range(TURNS):
                calls = app.turn(connection, app.model, messages)
                if not calls:
                    return ran
                results = []
                for _, _, arguments in calls:
                    ran += 1
                    rig.tool_bodies.append(str(arguments))
                    results.append(result(arguments, ran))
                app.append(messages, calls, results)
    return ran


def stuck(_messages: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    return [("search", {"query": "acme 2026 guidance"})]


def same_page(_arguments: dict[str, Any], _n: int) -> str:
    return "Acme: guidance will be published in March."
