"""How early a looping agent traced by OpenLLMetry's OpenAI Agents or LlamaIndex instrumentor is stopped, content
tracing on and off, with spanbreaker's adapter off (the instrumentor's spans alone, the breaker attached) and on.
Runs in the OpenLLMetry tier's venv (``make .venv/openllmetry/.installed``)::

    .venv/openllmetry/bin/python benchmarks/openllmetry_agent_scenarios.py

The agents are the tier's tests' (``tests/openllmetry``): an OpenAI Agents SDK agent on the SDK's Responses or Chat
Completions model, and a LlamaIndex ``FunctionAgent`` with a chat or a streaming model, each asking for the same
search again and again and getting the same page (at most 30 turns; LlamaIndex's ``max_iterations`` 30), and the
wide look-alike (six different queries, one answer). A token budget (``max_tokens=500``) on the OpenAI Agents agent's
wide run shows whether model calls' usage is counted. Printed: tool and model calls that ran, and what stopped the run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, set_trace_processors
from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor
from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

from spanbreaker.adapters.openllmetry_llama_index import ADAPTER as LLAMA_ADAPTER
from spanbreaker.adapters.openllmetry_openai_agents import ADAPTER as AGENTS_ADAPTER
from tests.genai_rig import WIDE, Rig, make_rig
from tests.llama_index.scripted import build, run
from tests.openllmetry.test_llama_index import _take_handlers_off
from tests.openllmetry.test_openai_agents import loop, queries, weather_agent

CONTENT = ("true", "false")


@contextmanager
def rig_with(adapter: Any, instrumentor: Any, with_adapter: bool, content: str, **config: Any) -> Iterator[Rig]:
    """A breaker on a fresh provider, the instrumentor on it, the adapter too when ``with_adapter``."""
    os.environ["TRACELOOP_TRACE_CONTENT"] = content
    set_trace_processors([])
    _take_handlers_off()
    rig = make_rig(**config)
    if with_adapter:
        adapter.instrument(rig.provider, rig.processor)
    instrumentor().instrument(tracer_provider=rig.provider)
    try:
        yield rig
    finally:
        instrumentor().uninstrument()
        adapter.uninstrument()
        set_trace_processors([])
        _take_handlers_off()
        rig.provider.shutdown()


def stopped_by(run_it: Callable[[], Any]) -> str:
    try:
        run_it()
    except BaseException as exc:  # the trip, or the framework's own limit
        return str(getattr(exc, "detector", None) or type(exc).__name__)
    return "answered"


def agents_row(api: Any, script: Any, with_adapter: bool, content: str, **config: Any) -> tuple[int, int, str]:
    with rig_with(AGENTS_ADAPTER, OpenAIAgentsInstrumentor, with_adapter, content, **config) as rig:
        agent, model = weather_agent(rig, script, api=api)
        outcome = stopped_by(lambda: Runner.run_sync(agent, "What's the weather in Paris?", max_turns=30))
        return len(rig.tool_bodies), model.calls, outcome


def llama_row(case: str, model: str, with_adapter: bool, content: str) -> tuple[int, int, str]:
    with rig_with(LLAMA_ADAPTER, LlamaIndexInstrumentor, with_adapter, content):
        agent, calls = build(case, model)
        outcome = stopped_by(lambda: run(agent))
        return calls.tools, calls.model, outcome


def main() -> None:
    print(f"{'agent':<52}{'content':>8}  {'adapter off: tools / model / stop':>36}  {'on: tools / model / stop':>30}")
    rows: list[tuple[str, Callable[[bool, str], tuple[int, int, str]]]] = [
        ("OpenAI Agents, Responses, loop", lambda on, c: agents_row(OpenAIResponsesModel, loop, on, c)),
        ("OpenAI Agents, Chat Completions, loop", lambda on, c: agents_row(OpenAIChatCompletionsModel, loop, on, c)),
        ("OpenAI Agents, Responses, wide", lambda on, c: agents_row(OpenAIResponsesModel, queries(WIDE), on, c)),
        ("OpenAI Agents, Chat Completions, wide, 500 tokens",
         lambda on, c: agents_row(OpenAIChatCompletionsModel, queries(WIDE), on, c, max_tokens=500)),
        ("LlamaIndex FunctionAgent, chat model, loop", lambda on, c: llama_row("loop", "chat", on, c)),
        ("LlamaIndex FunctionAgent, streaming, loop", lambda on, c: llama_row("loop", "stream", on, c)),
        ("LlamaIndex FunctionAgent, streaming, wide", lambda on, c: llama_row("wide", "stream", on, c)),
    ]
    for label, row in rows:
        for content in CONTENT:
            off, on = (" / ".join(map(str, row(with_adapter, content))) for with_adapter in (False, True))
            print(f"{label:<52}{content:>8}  {off:>36}  {on:>30}")


if __name__ == "__main__":
    main()
