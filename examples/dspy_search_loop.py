"""A DSPy ``ReAct`` agent re-runs one search and reads the same page every time; spanbreaker stops it, from the
spans of OpenInference's DSPy instrumentor. Offline: the model is scripted, served on a loopback port to DSPy's
real engine.

    python examples/dspy_search_loop.py
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline, should DSPy route through LiteLLM

import dspy
from _report import print_trip
from _scripted_dspy import react_script, react_step
from _scripted_openai import ScriptedModel
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

MAX_ITERS = 30
counts = {"search": 0}


def web_search(query: str) -> str:
    """Search the web."""
    counts["search"] += 1
    return "Acme Corp investor relations: guidance for 2026 will be published in March."


def main() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spanbreaker.instrument(tracer_provider=provider, frameworks=["dspy"])  # DSPy's instrumentor, with its adapter

    stuck = ScriptedModel(react_script(lambda seen: react_step("web_search", {"query": "acme 2026 revenue guidance"})),
                          model="stuck-model")
    with stuck.serve() as url:
        lm = dspy.LM("openai/stuck-model", api_base=f"{url}/v1", api_key="offline", cache=False)
        dspy.configure(lm=lm)
        react = dspy.ReAct("question -> answer", tools=[web_search], max_iters=MAX_ITERS)

        print(f"Asking a DSPy ReAct agent for Acme's guidance (max_iters={MAX_ITERS}) ...")
        try:
            react(question="What is Acme's 2026 revenue guidance?")
            print("The agent finished without being stopped.")
        except spanbreaker.Tripped as trip:
            print_trip(trip, exporter, f"model calls made: {stuck.calls}, web_search ran {counts['search']} times "
                       f"(ReAct's own limit alone would allow {MAX_ITERS})")


if __name__ == "__main__":
    main()
