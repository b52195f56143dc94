"""The application of the plain-loop tests and benchmark: an agent written as a loop around the OpenAI client."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from ..genai_rig import Rig
from .scripted import ScriptedModel

TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}}}}]
TURNS = 30
"""The loop's own limit on model turns."""


def client_for(model: ScriptedModel) -> openai.OpenAI:
    return model.client(openai.OpenAI, api_key="offline", base_url="http://scripted.invalid/v1")


Create = Callable[[openai.OpenAI, list[dict[str, Any]]], Any]
"""One request of the loop: (the scripted model's client, the messages) -> a Chat Completions reply."""


def chat_completion(client: openai.OpenAI, messages: list[dict[str, Any]]) -> Any:
    return client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)  # type: ignore[arg-type]


async def achat_completion(client: openai.AsyncOpenAI, messages: list[dict[str, Any]]) -> Any:
    """:func:`chat_completion` with the async client."""
    return await client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)  # type: ignore[arg-type]


def streamed_chat_completion(client: openai.OpenAI, messages: list[dict[str, Any]]) -> Any:
    """:func:`chat_completion` as a streaming application sends it (``stream=True``, usage in the last chunk): the
    chunks read as they come, the reply put back together from them."""
    stream = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS,  # type: ignore[arg-type]
                                            stream=True, stream_options={"include_usage": True})
    return _assembled(list(stream))


async def astreamed_chat_completion(client: openai.AsyncOpenAI, messages: list[dict[str, Any]]) -> Any:
    """:func:`streamed_chat_completion` with the async client."""
    stream = await client.chat.completions.create(model="gpt-4o-mini", messages=messages,  # type: ignore[arg-type]
                                                  tools=TOOLS, stream=True, stream_options={"include_usage": True})
    return _assembled([chunk async for chunk in stream])


def _assembled(chunks: list[Any]) -> ChatCompletion:
    """The reply a stream of Chat Completions chunks carried, as the client's own ``ChatCompletion``."""
    content, calls, finish = "", {}, "stop"
    for chunk in chunks:
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            content += choice.delta.content or ""
            for part in choice.delta.tool_calls or []:
                call = calls.setdefault(part.index, {"id": "", "type": "function",
                                                     "function": {"name": "", "arguments": ""}})
                call["id"] = part.id or call["id"]
                if part.function is not None:
                    call["function"]["name"] += part.function.name or ""
                    call["function"]["arguments"] += part.function.arguments or ""
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return ChatCompletion.model_validate({
        "id": chunks[0].id, "object": "chat.completion", "created": chunks[0].created, "model": chunks[0].model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}]})


def run_loop(rig: Rig, model: ScriptedModel, tool: Callable[[dict[str, Any], int], str],
             retry_each_call: bool = False, wrap: bool = True, create: Create = chat_completion) -> int:
    """The application's agent: Chat Completions with tools until the model answers; returns the tools run.
    ``create``: how a request is sent (the OpenAI client's own method, or another library around that client)."""
    client = client_for(model)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "find it"}]
    ran = 0
    tracer = rig.provider.get_tracer("app")
    with tracer.start_as_current_span("research") if wrap else nullcontext():
        for _ in range(TURNS):
            reply = create(client, messages)
            if retry_each_call:  # the app retries the same request (a timeout it did not trust)
                reply = create(client, messages)
            message = reply.choices[0].message
            if not message.tool_calls:
                return ran
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                ran += 1
                rig.tool_bodies.append(call.function.arguments)
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": tool(json.loads(call.function.arguments), ran)})
    return ran


async def run_async_loop(rig: Rig, model: ScriptedModel,
                         acreate: Callable[[openai.AsyncOpenAI, list[dict[str, Any]]], Awaitable[Any]]) -> None:
    """The agent with the async client, inside a span, every result the same page: until a trip (or the limit)."""
    client = model.client(openai.AsyncOpenAI, asynchronous=True, api_key="offline",
                          base_url="http://scripted.invalid/v1")
    messages: list[dict[str, Any]] = [{"role": "user", "content": "find it"}]
    with rig.provider.get_tracer("app").start_as_current_span("research"):
        for _ in range(TURNS):
            message = (await acreate(client, messages)).choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls or []:
                messages.append({"role": "tool", "tool_call_id": call.id, "content": "same page"})
