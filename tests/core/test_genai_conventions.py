"""The OpenTelemetry GenAI conventions read correctly, whatever a span carries when it starts.

Spans shaped as the GenAI semantic conventions prescribe (and as OpenTelemetry's util-genai ``handler.tool()``
makes them: name and kind at start, arguments and result only at the end, and only with content capture on),
through a real SDK provider. The point under test: a call whose arguments or result are not recorded is
"unknown", never compared as if they were empty; arguments that arrive at the end are decided then.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
from spanbreaker.conventions import classify
from spanbreaker.kinds import Kind

SCOPE = "opentelemetry.util.genai.handler"


def rig(**config: Any) -> tuple[Any, spanbreaker.BreakerSpanProcessor, InMemorySpanExporter]:
    provider = TracerProvider()
    processor = spanbreaker.BreakerSpanProcessor(spanbreaker.BreakerConfig().replace(**config))
    exporter = InMemorySpanExporter()
    provider.add_span_processor(processor)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer(SCOPE), processor, exporter


def tool(tracer: Any, query: str | None, result: str | None, *, late: bool = True, legacy: bool = False) -> None:
    """One ``execute_tool`` span; arguments at its end (``late``) or start, or never (``query`` None)."""
    arguments = None if query is None else json.dumps({"query": query})
    start: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}
    args_key, result_key = ("tool_arguments", "tool_response") if legacy else (
        "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")
    if arguments is not None and not late:
        start[args_key] = arguments
    with tracer.start_as_current_span("execute_tool search", attributes=start) as span:
        if arguments is not None and late:
            span.set_attribute(args_key, arguments)
        if result is not None:
            span.set_attribute(result_key, result)


def agent(tracer: Any) -> Any:
    return tracer.start_as_current_span("invoke_agent weather", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"})


WIDE = [f"timezone of city {c}" for c in "ABCDEFGHIJKL"]


@pytest.mark.parametrize("late", [True, False], ids=["arguments-at-end", "arguments-at-start"])
def test_distinct_calls_with_one_answer_are_quiet(late: bool) -> None:
    tracer, processor, _ = rig()
    with agent(tracer):
        for query in WIDE:
            tool(tracer, query, "Central European Time (UTC+1)", late=late)
    assert processor.stats.trips == 0


def test_calls_recorded_without_content_are_unknown_not_identical() -> None:
    """util-genai with content capture off: neither arguments nor results. Twelve calls: no repeat, no streak of
    empty results, no echo loop (before: tool_repeat at call 5)."""
    tracer, processor, _ = rig()
    with agent(tracer):
        for _ in range(12):
            tool(tracer, None, None)
    assert processor.stats.trips == 0


def test_known_arguments_with_unrecorded_results_are_not_repeats() -> None:
    tracer, processor, _ = rig()
    with agent(tracer):
        for _ in range(8):
            tool(tracer, "weather in Paris", None, late=False)
    assert processor.stats.trips == 0


def test_arguments_at_end_loop_trips_at_its_end_and_vetoes_the_next_call() -> None:
    tracer, _processor, exporter = rig()
    ran = 0
    with pytest.raises(spanbreaker.Tripped) as caught, agent(tracer):
        for _ in range(10):
            tool(tracer, "weather in Paris", "sunny, 20C", late=True)
            ran += 1
    assert caught.value.detector == "tool_repeat" and caught.value.evidence["identical_calls"] == 5
    assert ran == 5  # the fifth identical call ran (its arguments came with its end); the sixth was vetoed
    blocked = [s for s in exporter.get_finished_spans() if (s.attributes or {}).get("spanbreaker.blocked")]
    assert len(blocked) == 1 and blocked[0].name == "execute_tool search"


@pytest.mark.parametrize("attributes_at_start", [False, True], ids=["bare-steps", "steps-with-attributes"])
def test_an_agents_steps_named_as_its_invocations_are_steps_of_it(attributes_at_start: bool) -> None:
    """OpenLIT's smolagents instrumentation wraps each step of a run in ``invoke_agent {agent} step_{n}`` (marked
    ``invoke_agent``, the agent's name set after the start): steps of one agent, so a loop across them is seen.
    Read as agents, each step named by its span was a scope of its own and ten identical calls ran."""
    tracer, _processor, _exporter = rig()
    ran = 0
    step_attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"}
    with pytest.raises(spanbreaker.Tripped) as caught, agent(tracer):
        for number in range(1, 11):
            with tracer.start_as_current_span(f"invoke_agent weather step_{number}",
                                              attributes=step_attributes if attributes_at_start else None):
                tool(tracer, "weather in Paris", "sunny, 20C", late=True)
                ran += 1
    assert caught.value.detector == "tool_repeat" and ran == 5


@pytest.mark.parametrize(("name", "kind"), [
    ("invoke_agent weather step_3", Kind.CHAIN), ("invoke_agent weather planning", Kind.CHAIN),
    ("invoke_agent weather", Kind.AGENT), ("invoke_agent step_3", Kind.AGENT),
    ("invoke_agent weather step_x", Kind.AGENT), ("invoke_agent", Kind.CHAIN)])
def test_only_a_step_numbered_or_planning_invocation_is_a_step(name: str, kind: Kind) -> None:
    assert classify(name, {}) is kind
    assert classify(name, {"gen_ai.operation.name": "invoke_agent"}) is kind


@pytest.mark.parametrize("late", [True, False], ids=["legacy-at-end", "legacy-at-start"])
def test_pydantic_ai_legacy_keys_are_read(late: bool) -> None:
    tracer, processor, _ = rig()
    with agent(tracer):
        for query in WIDE[:8]:
            tool(tracer, query, f"{query}: UTC+1", late=late, legacy=True)
    assert processor.stats.trips == 0
    with pytest.raises(spanbreaker.Tripped), agent(tracer):
        for _ in range(10):
            tool(tracer, "weather in Paris", "sunny", late=late, legacy=True)


def chat(tracer: Any, messages: list[dict[str, Any]] | None, *, at_start: bool, tokens: int = 100) -> None:
    attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}
    text = None if messages is None else json.dumps(messages)
    if text is not None and at_start:
        attributes["gen_ai.input.messages"] = text
    with tracer.start_as_current_span("chat gpt-4o", attributes=attributes) as span:
        if text is not None and not at_start:
            span.set_attribute("gen_ai.input.messages", text)
        span.set_attribute("gen_ai.usage.input_tokens", tokens)
        span.set_attribute("gen_ai.usage.output_tokens", 10)


def message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def test_oversized_prompt_in_input_messages_is_vetoed_before_it_is_sent() -> None:
    tracer, _processor, _ = rig(max_prompt_tokens=10_000)
    with pytest.raises(spanbreaker.Tripped) as caught, agent(tracer):
        chat(tracer, [message("user", "x" * 60_000)], at_start=True)
    assert caught.value.detector == "context_growth" and caught.value.evidence["source"] == "estimated"


@pytest.mark.parametrize("at_start", [True, False], ids=["messages-at-start", "messages-at-end"])
def test_session_history_in_input_messages_trips_session_bloat(at_start: bool) -> None:
    history = [message("user" if i % 2 == 0 else "assistant", f"turn {i}") for i in range(250)]
    tracer, _processor, _ = rig()
    with pytest.raises(spanbreaker.Tripped) as caught, agent(tracer):
        chat(tracer, [message("system", "Be brief."), *history, message("user", "And now?")], at_start=at_start)
        chat(tracer, [message("user", "next")], at_start=at_start)  # vetoed when the first call decided at its end
    assert caught.value.detector == "session_bloat" and caught.value.evidence["history_messages"] == 250


def legacy_chat(tracer: Any, first: str, tokens: int) -> None:
    """OpenLLMetry's record of a chat call: the prompt flattened (``gen_ai.prompt.<i>.*``), no request text."""
    with tracer.start_as_current_span("openai.chat", attributes={"llm.request.type": "chat",
                                                                 "gen_ai.request.model": "gpt-4o"}) as span:
        span.set_attribute("gen_ai.prompt.0.role", "system")
        span.set_attribute("gen_ai.prompt.0.content", first)
        span.set_attribute("gen_ai.usage.input_tokens", tokens)
        span.set_attribute("gen_ai.usage.output_tokens", 10)


@pytest.mark.parametrize("record", ["input-messages-at-end", "flattened-prompt"])
@pytest.mark.parametrize(("second", "trips"), [("Answer from the report below.", False),
                                               ("Classify the question.", True)])
def test_a_reported_jump_is_judged_within_one_conversation(record: str, second: str, trips: bool) -> None:
    """Token counts reported at the end: a short routing call, then a long-document call opening with another
    message, is two conversations; the same opening growing 60k tokens is the jump."""
    tracer, _processor, exporter = rig()
    calls = [("Classify the question.", 100), (second, 60_000)]
    with contextlib.ExitStack() as stack:
        if trips:
            caught = stack.enter_context(pytest.raises(spanbreaker.Tripped))
        stack.enter_context(agent(tracer))
        for number, (first, tokens) in enumerate(calls):
            if record == "flattened-prompt":
                legacy_chat(tracer, first, tokens)
            else:
                chat(tracer, [message("system", first), message("user", f"call {number}")], at_start=False,
                     tokens=tokens)
        legacy_chat(tracer, "next", 100)  # vetoed when the second call tripped at its end
    if trips:
        assert caught.value.detector == "context_growth" and caught.value.evidence["source"] == "reported"
    else:
        assert not any(k.startswith("spanbreaker.") for s in exporter.get_finished_spans() for k in s.attributes or {})


def test_a_short_conversation_is_not_session_bloat() -> None:
    tracer, processor, _ = rig()
    with agent(tracer):
        for turn in range(3):
            chat(tracer, [message("system", "Be brief."), *[message("user", f"q{i}") for i in range(turn + 1)]],
                 at_start=False)
    assert processor.stats.trips == 0


def test_arguments_at_end_are_fingerprinted_in_the_trip_evidence() -> None:
    """The evidence names the repeated call by its arguments also when they came only with the span's end (before:
    the fingerprint of no arguments, the same for every call of the tool)."""
    fingerprints = {}
    for late in (True, False):
        for query in ("weather in Paris", "weather in Oslo"):
            tracer, _processor, _ = rig()
            with pytest.raises(spanbreaker.Tripped) as caught, agent(tracer):
                for _ in range(10):
                    tool(tracer, query, "sunny, 20C", late=late)
            fingerprints[late, query] = caught.value.evidence["args_fingerprint"]
    assert fingerprints[True, "weather in Paris"] == fingerprints[False, "weather in Paris"]
    assert fingerprints[True, "weather in Oslo"] == fingerprints[False, "weather in Oslo"]
    assert fingerprints[True, "weather in Paris"] != fingerprints[True, "weather in Oslo"]


@pytest.mark.parametrize("late", [True, False], ids=["at-end", "at-start"])
def test_strands_redacted_values_are_unknown_not_identical(late: bool) -> None:
    """Strands Agents writes ``[REDACTED]`` for the arguments and results it hides: twelve different calls read as
    unknown (before: as twelve identical calls, tool_repeat at call 5). The same calls unredacted still trip."""
    tracer, processor, _ = rig()
    with agent(tracer):
        for _ in range(12):
            with tracer.start_as_current_span("execute_tool search", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search",
                    **({} if late else {"gen_ai.tool.call.arguments": "[REDACTED]"})}) as span:
                if late:
                    span.set_attribute("gen_ai.tool.call.arguments", "[REDACTED]")
                span.set_attribute("gen_ai.tool.call.result", "[REDACTED]")
    assert processor.stats.trips == 0
    with pytest.raises(spanbreaker.Tripped), agent(tracer):
        for _ in range(12):
            tool(tracer, "weather in Paris", "sunny", late=late)


@pytest.mark.parametrize("name", ["chat", "chat gemini-2.5-flash", "generate_content gemini-2.5-flash",
                                  "text_completion davinci"])
def test_model_spans_known_only_by_name_are_model_calls(name: str) -> None:
    """A model call span that carries no attribute when it starts (Strands' ``chat``, Google ADK's ``generate_content
    {model}``) is a model call by the name the conventions prescribe: the call budget counts it and vetoes the
    next one."""
    tracer, _processor, exporter = rig(max_model_calls=3)
    calls = 0
    with pytest.raises(spanbreaker.Tripped) as caught, agent(tracer):
        for _ in range(6):
            with tracer.start_as_current_span(name) as span:
                calls += 1
                span.set_attribute("gen_ai.usage.input_tokens", 100)
    assert caught.value.detector == "call_budget" and calls == 3
    blocked = [s for s in exporter.get_finished_spans() if (s.attributes or {}).get("spanbreaker.blocked")]
    assert [s.name for s in blocked] == [name]


@pytest.mark.parametrize("name", ["chatbot.route", "chat_history", "POST /chat", "generate_contents"])
def test_other_spans_are_not_model_calls_by_name(name: str) -> None:
    tracer, processor, _ = rig(max_model_calls=3)
    with agent(tracer):
        for _ in range(6):
            with tracer.start_as_current_span(name):
                pass
    assert processor.stats.trips == 0


@pytest.mark.parametrize("merged_kind_at_start", [False, True], ids=["as-adk-starts-it", "as-recorded"])
def test_adk_merged_span_is_no_call(merged_kind_at_start: bool) -> None:
    """Google ADK follows a turn's parallel tool calls with an ``execute_tool (merged)`` span without arguments. It
    is no call: identical parallel calls turn after turn add up to a trip (before: the merged span was an unknown
    tool call, a change after every turn, and 24 identical calls ran unseen), also where the span carries
    ``gen_ai.operation.name`` from its start (a recorded trace replayed)."""
    tracer, _processor, _ = rig()
    turns = 0
    with pytest.raises(spanbreaker.Tripped) as caught, agent(tracer):
        for _ in range(8):
            with tracer.start_as_current_span("generate_content gemini-2.5-flash"):
                turns += 1
            for _ in range(3):
                tool(tracer, "weather in Paris", "sunny, 20C", late=True)
            merged = {"gen_ai.operation.name": "execute_tool"} if merged_kind_at_start else {}
            with tracer.start_as_current_span("execute_tool (merged)", attributes=merged) as span:
                span.set_attribute("gen_ai.operation.name", "execute_tool")
    assert caught.value.detector == "tool_repeat" and turns == 5


@pytest.mark.parametrize("content", ["Docs: use PostgresSaver", 'it\'s "quoted"\nover lines', ""])
def test_a_tool_message_recorded_as_its_str_is_read_as_its_content(content: str) -> None:
    """OpenLIT's LangGraph instrumentation records a tool run's result as ``str(ToolMessage)``, with a new
    ``tool_call_id`` every call: its content is the result (whole, no two calls' results were alike)."""
    ToolMessage = pytest.importorskip("langchain_core.messages").ToolMessage  # not in `make test-python`'s venv

    tracer, _processor, _exporter = rig()
    ran = 0
    with pytest.raises(spanbreaker.Tripped) as caught, agent(tracer):
        for number in range(10):
            result = str(ToolMessage(content=content, name="search", tool_call_id=f"call_{number}"))
            tool(tracer, "checkpoint postgres", result, late=True)
            ran += 1
    assert (caught.value.detector, ran) == ("tool_repeat", 5), (caught.value.detector, ran)


def test_invoke_agent_spans_naming_no_agent_are_parts_of_the_enclosing_agent() -> None:
    """OpenLIT's OpenAI Agents SDK processor wraps a run and each of its turns in ``invoke_agent`` spans that name no
    agent: no agent scope of their own, so no delegation chain through them (before, invoke_agent -> weather ->
    invoke_agent tripped ``delegation_cycle`` at the first turn) and a loop across the turns is seen."""
    tracer, _processor, _exporter = rig()
    ran = 0
    unnamed = {"gen_ai.operation.name": "invoke_agent"}
    run = tracer.start_as_current_span("invoke_agent", attributes=unnamed)
    with pytest.raises(spanbreaker.Tripped) as caught, run, agent(tracer):
        for _ in range(10):
            with tracer.start_as_current_span("invoke_agent", attributes=unnamed):
                tool(tracer, "weather in Paris", "sunny, 20C", late=True)
                ran += 1
    assert (caught.value.detector, ran) == ("tool_repeat", 5)
    assert classify("invoke_agent", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"}) is (
        Kind.AGENT)  # named by its attribute: an agent


def test_a_workflow_around_an_agents_calls_is_no_step() -> None:
    """OpenLIT's CrewAI instrumentation runs an agent's calls inside ``invoke_workflow AgentExecutor``, with no model
    call span the breaker reads. Read as a step, the workflow made every call of the agent one model turn: identical
    calls in one turn are one decision, and a loop of them never counted past one (CrewAI's own guard stopped it)."""
    tracer, _processor, _exporter = rig()
    ran = 0
    with pytest.raises(spanbreaker.Tripped) as caught, agent(tracer), tracer.start_as_current_span(
            "invoke_workflow AgentExecutor"):
        for _ in range(10):
            tool(tracer, "weather in Paris", "sunny, 20C", late=True)
            ran += 1
    assert (caught.value.detector, ran) == ("tool_repeat", 5)
    assert classify("invoke_workflow crew", {}) is Kind.OTHER
    assert classify("invoke_workflow", {"gen_ai.operation.name": "invoke_workflow"}) is Kind.OTHER


def test_a_failing_tool_under_a_workflow_is_judged_per_model_turn() -> None:
    """OpenLIT's LangGraph instrumentation runs the graph in ``invoke_workflow LangGraph``, its tool calls directly
    under it. Read as a step, the workflow kept each tool call's error for its own end, the run's: the same failure,
    model turn after model turn, was never an ``error_loop``."""
    tracer, _processor, _exporter = rig()
    ran = 0
    with pytest.raises(spanbreaker.Tripped) as caught, tracer.start_as_current_span("invoke_workflow LangGraph"):
        for turn in range(10):
            with tracer.start_as_current_span("chat gpt-4o-mini", attributes={"gen_ai.operation.name": "chat"}):
                pass
            with tracer.start_as_current_span("execute_tool run_tests", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "run_tests"}) as span:
                span.set_attribute("gen_ai.tool.call.arguments", json.dumps({"attempt": turn}))
                span.record_exception(KeyError("total"))
                span.set_status(trace_api.Status(trace_api.StatusCode.ERROR))
            ran += 1
    assert caught.value.detector == "error_loop" and ran == 4


def adk_tool(tracer: Any, call: int, query: str, result: Any) -> None:
    """An ADK ``execute_tool`` span as OpenInference's ADK instrumentor completes it: ADK's ``FunctionResponse``, with
    the call's own id, as the output."""
    with tracer.start_as_current_span("execute_tool search", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}) as span:
        call_id = f"call_{call}_0"
        span.set_attributes({
            "openinference.span.kind": "TOOL", "tool.name": "search", "tool.id": call_id,
            "gen_ai.tool.call.id": call_id, "input.value": json.dumps({"query": query}),
            "output.value": json.dumps({"id": call_id, "name": "search", "response": result}, separators=(",", ":"))})


def test_adk_function_responses_are_read_as_their_response() -> None:
    """Each call's ``FunctionResponse`` carries its own id: read whole, no two results were alike, and a loop of
    identical searches was caught only by ``low_exploration``, after 11 calls. Six different searches stay quiet."""
    tracer, _processor, _exporter = rig()
    ran = 0
    with pytest.raises(spanbreaker.Tripped) as caught, agent(tracer):
        for call in range(12):
            adk_tool(tracer, call, "weather in Paris", {"result": "No results."})
            ran += 1
    assert (caught.value.detector, ran) == ("tool_repeat", 5)
    tracer, processor, _exporter = rig()
    with agent(tracer):
        for call, query in enumerate(WIDE[:6]):
            adk_tool(tracer, call, query, {"result": "No results."})
    assert processor.engine.stats.trips == 0


@pytest.mark.parametrize("output", [
    {"id": "call_0_0", "name": "search", "response": {"result": "x"}, "extra": 1},  # not a FunctionResponse
    {"id": "record-7", "name": "search", "response": {"result": "x"}}])  # an id of the tool's own
def test_a_result_with_an_id_that_is_not_the_calls_own_is_read_whole(output: dict[str, Any]) -> None:
    from spanbreaker.conventions import google_adk

    text = json.dumps(output, separators=(",", ":"))
    assert google_adk.tool_result(text, {"tool.id": "call_0_0"}, 4096) is None
    assert google_adk.tool_result(json.dumps({"id": "call_0_0", "response": "plain"}), {"tool.id": "call_0_0"},
                                  4096) == "plain"
