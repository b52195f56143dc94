"""A Semantic Kernel agent with one search plugin, on the scripted OpenAI model (the model is the only stub): a
``ChatCompletionAgent`` or a kernel's own auto function calling (``OpenAIChatCompletion.get_chat_message_content`` with
``FunctionChoiceBehavior.Auto``), up to 30 auto-invoke attempts."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import openai
from opentelemetry import trace
from semantic_kernel import Kernel
from semantic_kernel.agents import ChatCompletionAgent
from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion, OpenAIChatPromptExecutionSettings
from semantic_kernel.contents import ChatHistory
from semantic_kernel.functions import kernel_function

from ..genai_rig import WIDE
from ..openai_client.scripted import Reply, ScriptedModel, tool_results

ATTEMPTS = 30
TOOL = "search-search"
"""The search's name as the model calls it and as Semantic Kernel names its span: plugin, then function."""
PAGE = "Acme: guidance will be published in March."


class SearchPlugin:
    def __init__(self, answer: Callable[[str, int], str] | None = None) -> None:
        self.queries: list[str] = []
        self.answer = answer

    @kernel_function(name="search", description="Search the web.")
    def search(self, query: str) -> str:
        self.queries.append(query)
        return self.answer(query, len(self.queries)) if self.answer else PAGE


def stuck(_messages: list[dict[str, Any]]) -> Reply:
    return [(TOOL, {"query": "acme 2026 guidance"})]


def wide(messages: list[dict[str, Any]]) -> Reply:
    done = tool_results(messages)
    return [(TOOL, {"query": WIDE[done]})] if done < len(WIDE) else "Central European Time, everywhere."


def service(model: ScriptedModel) -> OpenAIChatCompletion:
    client = model.client(openai.AsyncOpenAI, asynchronous=True, api_key="offline",
                          base_url="http://scripted.invalid/v1")
    return OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=client)


def behavior() -> FunctionChoiceBehavior:
    return FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=ATTEMPTS)


def run_agent(model: ScriptedModel, plugin: SearchPlugin, stream: bool = False) -> str:
    kernel = Kernel()
    kernel.add_plugin(plugin, plugin_name="search")
    agent = ChatCompletionAgent(service=service(model), kernel=kernel, name="Searcher",
                                instructions="Search, then answer.", function_choice_behavior=behavior())

    async def ask() -> str:
        if stream:
            return "".join([str(chunk.message) async for chunk in agent.invoke_stream(messages="Find the guidance.")])
        return str((await agent.get_response(messages="Find the guidance.")).message)

    return asyncio.run(ask())


def run_kernel(model: ScriptedModel, plugin: SearchPlugin) -> str:
    """The kernel's own auto function calling, in a span of the application's (one trace for the run)."""
    chat = service(model)
    kernel = Kernel()
    kernel.add_service(chat)
    kernel.add_plugin(plugin, plugin_name="search")
    history = ChatHistory()
    history.add_user_message("Find the guidance.")
    settings = OpenAIChatPromptExecutionSettings(function_choice_behavior=behavior())

    async def ask() -> str:
        with trace.get_tracer("app").start_as_current_span("research"):
            return str(await chat.get_chat_message_content(chat_history=history, settings=settings, kernel=kernel))

    return asyncio.run(ask())


RUNS = {"agent": run_agent, "kernel": run_kernel}
