"""OpenAI Agents SDK, pydantic-ai, Strands Agents, Microsoft Agent Framework and DSPy scenarios, and plain loops
around the OpenAI client, LiteLLM, Gemini and Bedrock's converse: how early the breaker stops a loop, and that
look-alikes stay quiet.

Each scenario is a real agent (the OpenAI Agents SDK with the real OpenInference instrumentor; pydantic-ai and
Strands Agents with their own GenAI spans, Strands with and without the spanbreaker adapter; Agent Framework's stock
GenAI spans) driven by a scripted model, run twice on a fresh SDK provider: once enforcing (the run stops at the
trip) and once in observe mode, where nothing is stopped and the framework's own limit ends the run (``max_turns``
/ ``request_limit`` / Strands' ``limits={"turns": ...}`` = LIMIT; Agent Framework's own 40 function-calling
rounds; the plain loop's own 30 turns; DSPy ReAct's ``max_iters``). "Calls" are model calls plus tool executions
actually made, counted from the exported spans (a blocked span's call never ran; the plain loop's tools, which leave
no span, as it ran them).

    python benchmarks/genai_scenarios.py
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import spanbreaker
from spanbreaker.signals import Kind
from tests.genai_rig import QUERIES, WIDE, Rig, make_rig

LIMIT = 30


def _adapter_rig(module: str) -> Callable[..., Rig]:
    """A rig with spanbreaker's adapter ``spanbreaker.adapters.<module>`` on its provider."""

    def rig_with(**config: Any) -> Rig:
        adapter = importlib.import_module(f"spanbreaker.adapters.{module}").ADAPTER
        rig = make_rig(**config)
        adapter.instrument(rig.provider, rig.processor)
        return rig

    return rig_with


_oa_rig = _adapter_rig("openai_agents")


def _pai_rig(version: int | None = None, **config: Any) -> Rig:
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings

    rig = make_rig(**config)
    settings = InstrumentationSettings(tracer_provider=rig.provider, **({"version": version} if version else {}))
    Agent.instrument_all(settings)
    return rig


def _strands_rig(adapter: bool = True, latest: bool = False, **config: Any) -> Rig:
    """Strands' process-wide tracer made afresh on the rig's provider (as ``tests/strands/conftest.py`` does),
    under Strands' default telemetry or ``gen_ai_latest_experimental``; the adapter on it unless stock."""
    import os

    from strands.telemetry import tracer as strands_tracer

    from spanbreaker.adapters.strands import ADAPTER, SCOPE

    ADAPTER.uninstrument()  # the previous scenario's, whichever way it was instrumented
    os.environ.pop("OTEL_SEMCONV_STABILITY_OPT_IN", None)
    if latest:
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    rig = make_rig(**config)
    tracer = strands_tracer.Tracer()
    tracer.tracer = rig.provider.get_tracer(SCOPE)
    strands_tracer._tracer_instance = tracer
    if adapter:
        ADAPTER.instrument(rig.provider, rig.processor)
    return rig


def _strands_run(script: Any) -> Callable[[Rig], None]:
    def run(rig: Rig) -> None:
        from tests.strands.scripted import Scripted
        from tests.strands.test_agents import weather_agent

        weather_agent(rig, Scripted(script))("What's the weather?", limits={"turns": LIMIT})

    return run


def _maf_rig(sensitive: bool = True, adapter: bool = False, **config: Any) -> Rig:
    """Agent Framework's stock spans on the rig's provider (its ``get_tracer`` pointed there, as
    ``tests/agent_framework/conftest.py`` does), its sensitive data on or off; spanbreaker's adapter on or off."""
    from agent_framework import observability

    from spanbreaker.adapters.agent_framework import ADAPTER

    rig = make_rig(**config)
    if adapter:
        ADAPTER.instrument(rig.provider, rig.processor)
    else:
        ADAPTER.uninstrument()
    provider = rig.provider
    observability.get_tracer = lambda name="agent_framework", version=None, schema_url=None, attributes=None: (
        provider.get_tracer(name, version, schema_url, attributes))
    settings = observability.OBSERVABILITY_SETTINGS
    settings.otel_semconv_stability_opt_in = None
    settings.enable_instrumentation = True
    settings.enable_sensitive_data = sensitive
    return rig


def _maf_run(script: Any) -> Callable[[Rig], None]:
    def run(rig: Rig) -> None:
        from tests.agent_framework.scripted import Scripted
        from tests.agent_framework.test_agents import run as run_agent
        from tests.agent_framework.test_agents import weather_agent

        run_agent(weather_agent(rig, Scripted(script)))

    return run


def _openai_rig(**config: Any) -> Rig:
    """A plain loop around the OpenAI client (no framework), traced by OpenInference's OpenAI instrumentor."""
    from openinference.instrumentation.openai import OpenAIInstrumentor

    rig = make_rig(**config)
    OpenAIInstrumentor().instrument(tracer_provider=rig.provider)
    return rig


def _client_script(queries: list[str] | None) -> Callable[[list[dict[str, Any]]], Any]:
    """The plain loops' model: the same search forever (``queries`` None), or each query once, then an answer."""
    from tests.openai_client.scripted import tool_results

    def script(messages: list[dict[str, Any]]) -> Any:
        done = tool_results(messages)
        if queries is None:
            return [("search", {"query": "acme 2026 guidance"})]
        return "done" if done >= len(queries) else [("search", {"query": queries[done]})]
    return script


def _openai_run(queries: list[str] | None = None, wrap: bool = True) -> Callable[[Rig], None]:
    """The same search forever (``queries`` None), or each query once and then an answer; every result the same.
    ``wrap`` False: no span of the application's around the loop (each model call a trace of its own)."""
    from tests.openai_client.loop import run_loop
    from tests.openai_client.scripted import ScriptedModel

    def run(rig: Rig) -> None:
        from openinference.instrumentation.openai import OpenAIInstrumentor

        try:
            run_loop(rig, ScriptedModel(_client_script(queries)), lambda arguments, n: "Central European Time (UTC+1)",
                     wrap=wrap)
        finally:
            OpenAIInstrumentor().uninstrument()
    return run


def _litellm_rig(**config: Any) -> Rig:
    """A plain loop around ``litellm.completion``, traced by OpenInference's LiteLLM instrumentor and its adapter."""
    import os

    from spanbreaker.adapters.litellm import ADAPTER

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline
    rig = make_rig(**config)
    ADAPTER.instrument(rig.provider, rig.processor)
    return rig


def _litellm_run(queries: list[str] | None = None, stock: bool = False) -> Callable[[Rig], None]:
    """:func:`_openai_run`'s script through ``litellm.completion``; ``stock``: the instrumentor without the adapter
    (what the breaker saw before it)."""
    from tests.litellm.test_litellm import loop
    from tests.openai_client.scripted import ScriptedModel

    def run(rig: Rig) -> None:
        from openinference.instrumentation.litellm import LiteLLMInstrumentor

        from spanbreaker.adapters.litellm import ADAPTER

        if stock:
            ADAPTER.uninstrument()
            LiteLLMInstrumentor().instrument(tracer_provider=rig.provider)
        try:
            loop(rig, ScriptedModel(_client_script(queries)), lambda n: "Central European Time (UTC+1)")
        finally:
            ADAPTER.uninstrument()
            if LiteLLMInstrumentor().is_instrumented_by_opentelemetry:
                LiteLLMInstrumentor().uninstrument()
    return run


def _gemini_rig(**config: Any) -> Rig:
    """A plain loop around Google's Gen AI client (Gemini), traced by OpenInference's Google GenAI instrumentor."""
    from openinference.instrumentation.google_genai import GoogleGenAIInstrumentor

    rig = make_rig(**config)
    GoogleGenAIInstrumentor().instrument(tracer_provider=rig.provider)
    return rig


def _gemini_run(queries: list[str] | None = None) -> Callable[[Rig], None]:
    """:func:`_client_script` with ``generate_content``, no span around the loop."""
    from tests.google_genai.test_tool_loop import run_loop
    from tests.openai_client.scripted import ScriptedModel

    def run(rig: Rig) -> None:
        from openinference.instrumentation.google_genai import GoogleGenAIInstrumentor

        try:
            run_loop(rig, ScriptedModel(_client_script(queries)), lambda n: "Central European Time (UTC+1)",
                     wrap=False)
        finally:
            GoogleGenAIInstrumentor().uninstrument()
    return run


_bedrock_rig = _adapter_rig("bedrock")  # a plain loop around boto3's converse, OpenInference's Bedrock instrumentor
_dspy_rig = _adapter_rig("dspy")  # a dspy.ReAct under OpenInference's DSPy instrumentor


def _bedrock_run(queries: list[str] | None = None, stock: bool = False, invoke: bool = False) -> Callable[[Rig], None]:
    """:func:`_client_script` with ``converse`` (``invoke``: ``invoke_model`` with Claude's body) on a scripted
    Bedrock Runtime on loopback, no span around the loop; ``stock``: the instrumentor without the adapter (what the
    breaker saw before it)."""
    from tests.bedrock.test_tool_loop import invoke_loop
    from tests.bedrock.test_tool_loop import loop as converse_loop

    loop = invoke_loop if invoke else converse_loop
    from tests.openai_client.scripted import ScriptedModel

    def run(rig: Rig) -> None:
        from openinference.instrumentation.bedrock import BedrockInstrumentor

        from spanbreaker.adapters.bedrock import ADAPTER

        if stock:
            ADAPTER.uninstrument()
            BedrockInstrumentor().instrument(tracer_provider=rig.provider)
        try:
            loop(rig, ScriptedModel(_client_script(queries)), lambda arguments, n: "Central European Time (UTC+1)",
                 wrap=False)
        finally:
            ADAPTER.uninstrument()
            if BedrockInstrumentor().is_instrumented_by_opentelemetry:
                BedrockInstrumentor().uninstrument()
    return run


def _instructor_run(output: str) -> Callable[[Rig], None]:
    """One Instructor ``create`` (tool mode, ``max_retries`` at the framework limit) on the plain OpenAI loop's rig:
    the same invalid output every attempt (``same``), a new invalid one every attempt (``new``), or fixed after two
    re-asks (``fixed``, healthy). Instructor's own limit ending the run is the stock outcome."""
    replies = {"same": lambda failed, _messages: {"name": "jason", "age": 25},
               "new": lambda failed, _messages: {"name": f"jason {failed}", "age": 25},
               "fixed": lambda failed, _messages: {"name": "JASON" if failed >= 2 else "jason", "age": 25}}

    def run(rig: Rig) -> None:
        from instructor.core import InstructorRetryException
        from openinference.instrumentation.openai import OpenAIInstrumentor

        from tests.instructor.test_retries import answers, extract

        try:
            extract(answers(replies[output]), retries=LIMIT)
        except InstructorRetryException:
            pass  # max_retries ended it
        finally:
            OpenAIInstrumentor().uninstrument()
    return run


def _instructor_json_run(output: str) -> Callable[[Rig], None]:
    """The same in Instructor's ``Mode.JSON``: the model answers with JSON text, a failed answer is re-asked in a user
    message (``Correct your JSON ONLY RESPONSE ...``)."""
    names = {"same": lambda reasks: "jason", "new": lambda reasks: f"jason {reasks}",
             "fixed": lambda reasks: "JASON" if reasks >= 2 else "jason"}

    def run(rig: Rig) -> None:
        from instructor.core import InstructorRetryException
        from openinference.instrumentation.openai import OpenAIInstrumentor

        from tests.instructor.test_retries import extract_json, json_answers

        try:
            extract_json(json_answers(names[output]), "JSON", retries=LIMIT)
        except InstructorRetryException:
            pass  # max_retries ended it
        finally:
            OpenAIInstrumentor().uninstrument()
    return run


def _dspy_run(script: str, asynchronous: bool = False) -> Callable[[Rig], None]:
    """``tests/dspy/scripted.py``'s agent on ``script`` (``max_iters`` = LIMIT), on DSPy's native engine; the tool
    records its queries in the rig's ``tool_bodies``."""
    from tests.dspy.scripted import agent

    def run(rig: Rig) -> None:
        from spanbreaker.adapters.dspy import ADAPTER

        try:
            with agent(script, max_iters=LIMIT, searches=rig.tool_bodies) as react:
                react.run_async() if asynchronous else react()
        finally:
            ADAPTER.uninstrument()  # the next scenario instruments DSPy on its own provider
    return run


def _oa_run(script: Any, handoff: bool = False, answer: Any = None) -> Callable[[Rig], None]:
    def run(rig: Rig) -> None:
        from agents import Agent, Runner

        from tests.openai_agents.scripted import ScriptedModel
        from tests.openai_agents.test_agents import weather_agent

        agent, _ = weather_agent(rig, script, answer)
        if handoff:
            agent = Agent(name="Triage", handoffs=[agent],
                          model=ScriptedModel(lambda n, items: [("transfer_to_weather_agent", {})]))
        Runner.run_sync(agent, "What's the weather?", max_turns=LIMIT)

    return run


def _pai_run(script: Any) -> Callable[[Rig], None]:
    def run(rig: Rig) -> None:
        from pydantic_ai import UsageLimits

        from tests.pydantic_ai.scripted import Scripted
        from tests.pydantic_ai.test_agents import weather_agent

        weather_agent(rig, Scripted(script)).run_sync("Weather?", usage_limits=UsageLimits(request_limit=LIMIT))

    return run


def _pai_output_run(fixed_after: int | None) -> Callable[[Rig], None]:
    """A structured output (``output_type``) that fails validation anew every attempt, or is fixed after
    ``fixed_after`` re-asks; pydantic-ai's own ``retries`` at the framework limit."""
    def run(rig: Rig) -> None:
        from pydantic_ai import Agent
        from pydantic_ai.exceptions import UnexpectedModelBehavior

        from tests.genai_rig import Person
        from tests.pydantic_ai.test_agents import person_model

        with contextlib.suppress(UnexpectedModelBehavior):  # "Exceeded maximum output retries": its own limit
            Agent(person_model(fixed_after), output_type=Person, retries=LIMIT).run_sync("Extract: jason is 25")

    return run


def _haystack_rig(adapter: bool = True, **config: Any) -> Rig:
    """Haystack's ``Agent`` under OpenInference's Haystack instrumentor, with spanbreaker's adapter or stock."""
    import os

    os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
    if adapter:
        return _adapter_rig("haystack")(**config)
    from openinference.instrumentation.haystack import HaystackInstrumentor

    rig = make_rig(**config)
    HaystackInstrumentor().instrument(tracer_provider=rig.provider)
    return rig


def _haystack_run(queries: list[str] | None = None) -> Callable[[Rig], None]:
    """The same search every turn (``queries`` None), or each query once and then an answer."""
    def run(rig: Rig) -> None:
        from haystack.dataclasses import ChatMessage
        from openinference.instrumentation.haystack import HaystackInstrumentor

        from tests.haystack import scripted

        script = scripted.loop if queries is None else scripted.queries(queries)
        try:
            scripted.agent(rig, scripted.scripted(script), max_agent_steps=LIMIT).run(
                messages=[ChatMessage.from_user("Weather?")])
        finally:
            from spanbreaker.adapters.haystack import ADAPTER

            ADAPTER.uninstrument()  # the adapter's patches, and the instrumentor it switched on
            if HaystackInstrumentor().is_instrumented_by_opentelemetry:  # the stock scenario's
                HaystackInstrumentor().uninstrument()
    return run


def _loop_oa(n: int, items: Any) -> Any:
    return [("search", {"query": "weather in Paris"})]


def _loop_pai(n: int) -> Any:
    return [("search", {"query": "weather in Paris"})]


def _queries_oa(qs: list[str], handoffs: int = 0) -> Any:
    return lambda n, items: [("search", {"query": qs[n - handoffs]})] if n - handoffs < len(qs) else "All sunny."


def _queries_pai(qs: list[str]) -> Any:
    return lambda n: [("search", {"query": qs[n]})] if n < len(qs) else "All sunny."


SCENARIOS: list[tuple[str, Callable[..., Rig], Callable[[Rig], None], dict[str, Any]]] = [
    ("OpenAI Agents: same search, same answer", _oa_rig, _oa_run(_loop_oa), {}),
    ("OpenAI Agents: handoff, then the loop", _oa_rig, _oa_run(_loop_oa, handoff=True), {}),
    ("OpenAI Agents: 3 queries (healthy)", _oa_rig, _oa_run(_queries_oa(QUERIES)), {}),
    ("OpenAI Agents: 6 queries, one answer (wide)", _oa_rig, _oa_run(_queries_oa(WIDE)), {}),
    ("pydantic-ai: same search, same answer", _pai_rig, _pai_run(_loop_pai), {}),
    ("pydantic-ai v2 format: same search", _pai_rig, _pai_run(_loop_pai), {"version": 2}),
    ("pydantic-ai: 6 queries, one answer (wide)", _pai_rig, _pai_run(_queries_pai(WIDE)), {}),
    ("pydantic-ai v2 format: wide", _pai_rig, _pai_run(_queries_pai(WIDE)), {"version": 2}),
    ("pydantic-ai: structured output failing validation every attempt", _pai_rig, _pai_output_run(None), {}),
    ("pydantic-ai: structured output fixed after three re-asks (healthy)", _pai_rig, _pai_output_run(3), {}),
    ("Strands (adapter): same search, same answer", _strands_rig, _strands_run(_loop_pai), {}),
    ("Strands (adapter, latest conventions): same search", _strands_rig, _strands_run(_loop_pai), {"latest": True}),
    ("Strands (adapter): 3 queries (healthy)", _strands_rig, _strands_run(_queries_pai(QUERIES)), {}),
    ("Strands (adapter): 6 queries, one answer (wide)", _strands_rig, _strands_run(_queries_pai(WIDE)), {}),
    ("Strands stock, default telemetry: same search", _strands_rig, _strands_run(_loop_pai), {"adapter": False}),
    ("Strands stock, latest conventions: same search", _strands_rig, _strands_run(_loop_pai),
     {"adapter": False, "latest": True}),
    ("Agent Framework, sensitive data on: same search", _maf_rig, _maf_run(_loop_pai), {}),
    ("Agent Framework, sensitive data on: 6 queries, one answer (wide)", _maf_rig, _maf_run(_queries_pai(WIDE)), {}),
    ("Agent Framework, sensitive data off, stock (no adapter): same search", _maf_rig, _maf_run(_loop_pai),
     {"sensitive": False}),
    ("Agent Framework, sensitive data off, adapter: same search", _maf_rig, _maf_run(_loop_pai),
     {"sensitive": False, "adapter": True}),
    ("Agent Framework, sensitive data off, adapter: 6 queries, one answer (wide)", _maf_rig,
     _maf_run(_queries_pai(WIDE)), {"sensitive": False, "adapter": True}),
    ("plain OpenAI loop (no framework): same search, same answer", _openai_rig, _openai_run(), {}),
    ("plain OpenAI loop (no framework): 6 queries, one answer (wide)", _openai_rig, _openai_run(WIDE), {}),
    ("plain OpenAI loop, no span around it: same search", _openai_rig, _openai_run(wrap=False), {}),
    ("plain OpenAI loop, no span around it: 6 queries, one answer (wide)", _openai_rig, _openai_run(WIDE, False), {}),
    ("plain LiteLLM loop (litellm.completion): same search", _litellm_rig, _litellm_run(), {}),
    ("plain LiteLLM loop: 6 queries, one answer (wide)", _litellm_rig, _litellm_run(WIDE), {}),
    ("plain LiteLLM loop, stock instrumentor (no adapter): same search", _litellm_rig, _litellm_run(stock=True), {}),
    ("plain Gemini loop (google-genai), no span around it: same search", _gemini_rig, _gemini_run(), {}),
    ("plain Gemini loop, no span around it: 6 queries, one answer (wide)", _gemini_rig, _gemini_run(WIDE), {}),
    ("plain Bedrock loop (boto3 converse), no span around it: same search", _bedrock_rig, _bedrock_run(), {}),
    ("plain Bedrock loop, no span around it: 6 queries, one answer (wide)", _bedrock_rig, _bedrock_run(WIDE), {}),
    ("plain Bedrock loop, stock instrumentor (no adapter): same search", _bedrock_rig, _bedrock_run(stock=True), {}),
    ("plain Bedrock loop on invoke_model (Claude's body), no span around it: same search", _bedrock_rig,
     _bedrock_run(invoke=True), {}),
    ("plain Bedrock loop on invoke_model, stock instrumentor (no adapter): same search", _bedrock_rig,
     _bedrock_run(stock=True, invoke=True), {}),
    ("Instructor (tool mode): the same invalid output every attempt", _openai_rig, _instructor_run("same"), {}),
    ("Instructor (tool mode): a new invalid output every attempt", _openai_rig, _instructor_run("new"), {}),
    ("Instructor (tool mode): fixed after two re-asks (healthy)", _openai_rig, _instructor_run("fixed"), {}),
    ("Instructor (JSON mode): the same invalid output every attempt", _openai_rig, _instructor_json_run("same"), {}),
    ("Instructor (JSON mode): a new invalid output every attempt", _openai_rig, _instructor_json_run("new"), {}),
    ("Instructor (JSON mode): fixed after two re-asks (healthy)", _openai_rig, _instructor_json_run("fixed"), {}),
    ("Haystack Agent (adapter): same search, same answer", _haystack_rig, _haystack_run(), {}),
    ("Haystack Agent (adapter): 6 queries, one answer (wide)", _haystack_rig, _haystack_run(WIDE), {}),
    ("Haystack Agent, stock instrumentor (no adapter): same search", _haystack_rig, _haystack_run(),
     {"adapter": False}),
    ("DSPy ReAct: same search, same answer", _dspy_rig, _dspy_run("loop"), {}),
    ("DSPy ReAct (`acall`): same search, same answer", _dspy_rig, _dspy_run("loop", asynchronous=True), {}),
    ("DSPy ReAct: same search, new results each time (healthy)", _dspy_rig, _dspy_run("fresh"), {}),
    ("DSPy ReAct: 10 queries, one answer (wide)", _dspy_rig, _dspy_run("wide"), {}),
]


def measure(make: Callable[..., Rig], run: Callable[[Rig], None], **config: Any) -> tuple[str, int, int]:
    rig = make(**config)
    detector = "-"
    try:
        run(rig)
    except spanbreaker.Tripped as trip:
        detector = trip.detector
    except Exception as exc:  # the framework's own limit (MaxTurnsExceeded, UsageLimitExceeded) ended the run
        if "xceeded" not in type(exc).__name__:
            raise
    finally:
        spanbreaker.instrumentation.uninstrument()
        rig.provider.shutdown()
    if detector == "-":
        detector = next((str((s.attributes or {}).get("spanbreaker.detector")) for s in rig.tripped()), "-")
    # A plain loop's tools leave no span: its application counts what it ran (rig.tool_bodies), as the scripted
    # tools of the framework scenarios do too.
    return detector, len(rig.ran(Kind.LLM)), max(len(rig.ran(Kind.TOOL)), len(rig.tool_bodies))


def main() -> None:
    import logging
    import warnings

    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    print(f"OpenAI Agents SDK / pydantic-ai / Strands / Agent Framework scenarios, framework limit {LIMIT}; "
          "calls = model + tool calls that ran")
    print("| scenario | detector | calls to trip (model+tool) | framework limit alone | calls saved |")
    print("|---|---|---|---|---|")
    for name, make, run, extra in SCENARIOS:
        detector, model, tool = measure(make, run, **extra)
        _, model_alone, tool_alone = measure(make, run, mode="observe", **extra)
        made, alone = model + tool, model_alone + tool_alone
        shown = detector if detector != "-" else "quiet"
        print(f"| {name} | {shown} | {made} ({model}+{tool}) | {alone} ({model_alone}+{tool_alone}) | {alone - made} |")


if __name__ == "__main__":
    main()
