"""A Haystack ``Agent`` re-runs one search and reads the same page every time; spanbreaker stops it, from the spans
of OpenInference's Haystack instrumentor with spanbreaker's Haystack adapter (a tool span per call: the stock
instrumentor makes none, and Haystack's ``max_agent_steps`` alone would let the loop run on). Offline: the model is
scripted, serving Haystack's real ``OpenAIChatGenerator``.

    pip install 'spanbreaker[haystack]'
    python examples/haystack_search_loop.py
"""

from __future__ import annotations

import os

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # offline: no usage telemetry

import openai
from _report import print_trip
from _scripted_openai import ScriptedModel
from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import Tool
from haystack.utils import Secret
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

MAX_AGENT_STEPS = 30
counts = {"web_search": 0}


def web_search(query: str) -> str:
    counts["web_search"] += 1
    return "Acme Corp investor relations: guidance for 2026 will be published in March."


def main() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spanbreaker.instrument(tracer_provider=provider, frameworks=["haystack"])  # its instrumentor, with the adapter

    stuck = ScriptedModel(lambda messages: [("web_search", {"query": "acme 2026 revenue guidance"})])
    generator = OpenAIChatGenerator(api_key=Secret.from_token("offline"), model="gpt-4o-mini")
    generator.client = stuck.client(openai.OpenAI, api_key="offline")  # the scripted model stands in for the API
    search = Tool(name="web_search", description="Search the web.", function=web_search,
                  parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})
    agent = Agent(chat_generator=generator, tools=[search], max_agent_steps=MAX_AGENT_STEPS)

    print(f"Asking a Haystack Agent for Acme's guidance (max_agent_steps={MAX_AGENT_STEPS}) ...")
    try:
        agent.run(messages=[ChatMessage.from_user("What is Acme's 2026 revenue guidance?")])
        print("The agent finished without being stopped.")
    except spanbreaker.Tripped as trip:
        print_trip(trip, exporter, f"model calls made: {stuck.calls}, web_search ran {counts['web_search']} times "
                   f"(max_agent_steps alone would allow {MAX_AGENT_STEPS})")


if __name__ == "__main__":
    main()
