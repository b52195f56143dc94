"""A tool loop around ``litellm.completion`` / ``acompletion``, traced by the real OpenInference LiteLLM
instrumentor through spanbreaker's adapter. The stock instrumentor gives a call's span its kind and request only
just after it starts, so the breaker saw nothing; the adapter makes the span start with them. The model is the
only stub: a scripted OpenAI-compatible transport under the OpenAI client LiteLLM calls (``client=``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import litellm
import openai
import pytest
from openinference.instrumentation.litellm import LiteLLMInstrumentor

import spanbreaker
from spanbreaker.adapters.litellm import ADAPTER
from spanbreaker.signals import Kind

from ..genai_rig import Rig, make_rig
from ..openai_client.loop import TOOLS, run_async_loop, run_loop
from ..openai_client.scripted import Reply, ScriptedModel, tool_results

MODEL = "openai/gpt-4o-mini"


@pytest.fixture
def rig() -> Iterator[Rig]:
    made = make_rig()
    ADAPTER.instrument(made.provider, made.processor)
    yield made
    ADAPTER.uninstrument()
    made.provider.shutdown()


def stuck(_messages: list[dict[str, Any]]) -> Reply:
    return [("search", {"query": "acme 2026 guidance"})]


def completion(client: openai.OpenAI, messages: list[dict[str, Any]]) -> Any:
    """The loop's request through LiteLLM (its OpenAI route, the scripted model's client behind it)."""
    return litellm.completion(model=MODEL, messages=messages, tools=TOOLS, client=client)


def loop(rig: Rig, model: ScriptedModel, result: Callable[[int], str], *, wrap: bool = True) -> int:
    """The application's agent around ``litellm.completion``; returns the tools run."""
    return run_loop(rig, model, lambda arguments, n: result(n), wrap=wrap, create=completion)


def same_page(_n: int) -> str:
    return "Acme: guidance will be published in March."


@pytest.mark.parametrize("wrap", [True, False], ids=["in-a-span", "no-span"])
def test_a_completion_loop_is_stopped_before_the_sixth_request_is_sent(rig: Rig, wrap: bool) -> None:
    model = ScriptedModel(stuck)
    with pytest.raises(spanbreaker.Tripped) as raised:
        loop(rig, model, same_page, wrap=wrap)
    trip = raised.value
    assert trip.detector == "tool_repeat" and trip.evidence["calls_from_prompt"] is True
    assert model.calls == 5, "the sixth request, which would send the fifth identical result, was never sent"
    llm = rig.of_kind(Kind.LLM)
    assert len(llm) == 6 and len(rig.ran(Kind.LLM)) == 5
    blocked = rig.blocked()
    assert [s.name for s in blocked] == ["completion"]
    assert blocked[0].attributes["spanbreaker.tripped"] is True  # type: ignore[index]
    rig.assert_nothing_lost()


def test_an_acompletion_loop_is_stopped_the_same_way(rig: Rig) -> None:
    model = ScriptedModel(stuck)

    async def acompletion(client: openai.AsyncOpenAI, messages: list[dict[str, Any]]) -> Any:
        return await litellm.acompletion(model=MODEL, messages=messages, tools=TOOLS, client=client)

    with pytest.raises(spanbreaker.Tripped) as raised:
        asyncio.run(run_async_loop(rig, model, acompletion))
    assert raised.value.detector == "tool_repeat" and model.calls == 5
    assert [s.name for s in rig.blocked()] == ["acompletion"]
    rig.assert_nothing_lost()


def test_the_spans_start_with_what_the_instrumentor_sets_after(rig: Rig) -> None:
    """The start attributes are the instrumentor's own (its extractor, run for the adapter): kind, model, request."""
    model = ScriptedModel(lambda messages: "done")
    assert loop(rig, model, same_page) == 0
    keys = rig.ledger.keys_at_start(Kind.LLM)
    assert len(keys) == 1 and {"openinference.span.kind", "llm.model_name", "input.value"} <= keys[0]
    span = rig.of_kind(Kind.LLM)[0]
    assert json.loads(span.attributes["input.value"])["messages"][0]["content"] == "find it"  # type: ignore[index]


def test_model_calls_count_against_the_budget_when_they_start() -> None:
    made = make_rig(max_model_calls=3)
    ADAPTER.instrument(made.provider, made.processor)
    model = ScriptedModel(lambda messages: [("search", {"query": f"q{tool_results(messages)}"})])
    try:
        with pytest.raises(spanbreaker.Tripped) as raised:
            loop(made, model, lambda n: f"page {n}")
    finally:
        ADAPTER.uninstrument()
        made.provider.shutdown()
    assert raised.value.detector == "call_budget" and model.calls == 3


def test_the_same_call_with_new_results_is_quiet(rig: Rig) -> None:
    model = ScriptedModel(lambda messages: "done" if tool_results(messages) >= 10 else stuck(messages))
    assert loop(rig, model, lambda n: f"Latest headline number {n}: {'ab' * n}") == 10
    rig.assert_quiet()
    rig.assert_nothing_lost()


def test_an_instrumentor_the_application_switched_on_first_is_moved_under_the_adapter() -> None:
    """``LiteLLMInstrumentor().instrument()`` before ``spanbreaker.instrument()``: LiteLLM holds the stock methods;
    the adapter switches the instrumentor off and on again, patched, so the loop is still stopped at start."""
    made = make_rig()
    LiteLLMInstrumentor().instrument(tracer_provider=made.provider)
    ADAPTER.instrument(made.provider, made.processor)
    model = ScriptedModel(stuck)
    try:
        with pytest.raises(spanbreaker.Tripped):
            loop(made, model, same_page)
    finally:
        ADAPTER.uninstrument()
        LiteLLMInstrumentor().uninstrument()
        made.provider.shutdown()
    assert model.calls == 5


def test_uninstrument_puts_litellm_back() -> None:
    original = litellm.completion
    made = make_rig()
    ADAPTER.instrument(made.provider, made.processor)
    assert litellm.completion is not original
    ADAPTER.uninstrument()
    assert litellm.completion is original and not LiteLLMInstrumentor().is_instrumented_by_opentelemetry
    made.provider.shutdown()


def test_litellm_under_a_framework_model_span_counts_each_model_call_once() -> None:
    """A smolagents ``LiteLLMModel`` traced by both instrumentors: smolagents' model span, LiteLLM's inside it. With
    ``max_model_calls=3`` the fourth step's model call is vetoed; counted twice, the second step's would be."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from smolagents import LiteLLMModel, ToolCallingAgent, tool

    from spanbreaker.instrumentation import uninstrument

    @tool
    def search(query: str) -> str:
        """Search the web.

        Args:
            query: what to look for.
        """
        return f"page for {query}"

    uninstrument()
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spanbreaker.instrument(tracer_provider=provider, config=spanbreaker.BreakerConfig(max_model_calls=3),
                           frameworks=["smolagents", "litellm"])
    model = ScriptedModel(lambda messages: [("search", {"query": f"q{tool_results(messages)}"})])
    client = model.client(openai.OpenAI, api_key="offline", base_url="http://scripted.invalid/v1")
    litellm_model = LiteLLMModel(MODEL)
    # LiteLLMModel calls litellm.completion through its `client` (the litellm module): the same call, served by the
    # scripted model's OpenAI client.
    litellm_model.client = SimpleNamespace(completion=lambda **kwargs: litellm.completion(client=client, **kwargs))
    agent = ToolCallingAgent(tools=[search], model=litellm_model, max_steps=10)
    try:
        with pytest.raises(spanbreaker.Tripped) as raised:
            agent.run("find it")
    finally:
        uninstrument()
        provider.shutdown()
    assert raised.value.detector == "call_budget" and model.calls == 3
    names = [s.name for s in exporter.get_finished_spans()]
    assert names.count("completion") == 3 and "LiteLLMModel.generate" in names, names


LAUNCHER_ORDER = """
import sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
import spanbreaker
trace.set_tracer_provider(TracerProvider())
spanbreaker.instrument(frameworks=["litellm"])          # the launcher's pre-instrument hook: LiteLLM not imported yet
assert "litellm" not in sys.modules
from openinference.instrumentation.litellm import LiteLLMInstrumentor
LiteLLMInstrumentor().instrument()                      # the launcher's entry point: imports LiteLLM itself
import litellm
import openai
from tests.openai_client.scripted import ScriptedModel
model = ScriptedModel(lambda messages: [("search", {"query": "acme"})])
client = model.client(openai.OpenAI, api_key="offline", base_url="http://scripted.invalid/v1")
messages = [{"role": "user", "content": "find it"}]
try:
    for _ in range(20):
        message = litellm.completion(model="openai/gpt-4o-mini", messages=messages, client=client).choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        messages += [{"role": "tool", "tool_call_id": c.id, "content": "same"} for c in message.tool_calls]
except spanbreaker.Tripped as trip:
    original = LiteLLMInstrumentor.original_litellm_funcs["completion"]
    print("tripped", trip.detector, model.calls, type(original).__name__)
"""


def test_the_launchers_order_the_instrumentor_importing_litellm_itself() -> None:
    """Under ``opentelemetry-instrument`` spanbreaker's hook runs first and waits for LiteLLM's import, which the
    instrumentor's own ``_instrument`` makes: the adapter then only patches, and that ``_instrument`` binds LiteLLM
    to the patched methods (switching it on again from inside would have it wrap its own wrappers)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", LAUNCHER_ORDER], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "tripped tool_repeat 5 function", done.stdout[-2000:]
