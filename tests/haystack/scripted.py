"""Haystack's real ``Agent`` around its real ``OpenAIChatGenerator``, whose OpenAI client the scripted
OpenAI-compatible model of the examples serves in process (no network): the only stub in tests/haystack."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import openai
from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.tools import Tool
from haystack.utils import Secret

from ..genai_rig import Rig, search_body
from ..openai_client.scripted import Reply, ScriptedModel, tool_results

__all__ = ["Reply", "ScriptedModel", "agent", "loop", "queries", "scripted"]


def scripted(script: Callable[[int], Reply]) -> ScriptedModel:
    """``script(tool results in the request so far) -> reply``."""
    return ScriptedModel(lambda messages: script(tool_results(messages)))


def loop(_n: int) -> Reply:
    return [("search", {"query": "weather in Paris"})]


def queries(qs: list[str]) -> Callable[[int], Reply]:
    return lambda n: [("search", {"query": qs[n]})] if n < len(qs) else "All sunny."


def agent(rig: Rig, model: ScriptedModel, answer: Any = None, max_agent_steps: int = 30) -> Agent:
    """A Haystack ``Agent`` with one ``search`` tool (its body counted in ``rig.tool_bodies``) and a chat generator
    on ``model`` (sync and async clients)."""
    generator = OpenAIChatGenerator(api_key=Secret.from_token("scripted"), model="gpt-4o-mini")
    generator.client = model.client(openai.OpenAI, api_key="scripted")
    generator.async_client = model.client(openai.AsyncOpenAI, asynchronous=True, api_key="scripted")
    search = Tool(name="search", description="Search the web.",
                  parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
                  function=lambda query: search_body(rig, query, answer))
    return Agent(chat_generator=generator, tools=[search], max_agent_steps=max_agent_steps)
