"""The application of the plain-loop tests and benchmark: an agent written as a loop around the OpenAI client."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import openai

from ..genai_rig import Rig
from .scripted import ScriptedModel

TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}}}}]
TURNS = 30
"""The loop's own limit on model turns."""


def client_for(model: ScriptedModel) -> openai.OpenAI:
    return model.client(openai.OpenAI, api_key="offline", base_url="http://scripted.invalid/v1")


def run_loop(rig: Rig, model: ScriptedModel, tool: Callable[[dict[str, Any], int], str],
             retry_each_call: bool = False, wrap: bool = True) -> int:
    """The application's agent: Chat Completions with tools until the model answers; returns the tools run."""
    client = client_for(model)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "find it"}]
    ran = 0
    tracer = rig.provider.get_tracer("app")
    with tracer.start_as_current_span("research") if wrap else nullcontext():
        for _ in range(TURNS):
            reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
            if retry_each_call:  # the app retries the same request (a timeout it did not trust)
                reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
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
