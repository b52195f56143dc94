"""A plain tool loop around the real OpenAI client, traced by the real OpenInference OpenAI instrumentor: model call
spans only, no tool spans. The breaker reads each prompt's last turn (the model's tool calls and their results) and
stops a loop there, vetoing the model call that would read the repeated result. Healthy look-alikes stay quiet.
The model is the only stub (an in-process HTTP transport)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from openinference.instrumentation.openai import OpenAIInstrumentor

import spanbreaker
from spanbreaker.signals import Kind

from ..genai_rig import Rig, make_rig
from .loop import TOOLS, TURNS, achat_completion, client_for, run_async_loop, run_loop
from .scripted import Reply, ScriptedModel, tool_results


@pytest.fixture
def rig() -> Iterator[Rig]:
    made = make_rig()
    OpenAIInstrumentor().instrument(tracer_provider=made.provider)
    yield made
    OpenAIInstrumentor().uninstrument()
    made.provider.shutdown()


def stuck(_messages: list[dict[str, Any]]) -> Reply:
    return [("search", {"query": "acme 2026 guidance"})]


def until(calls: int) -> Callable[[list[dict[str, Any]]], Reply]:
    """The stuck model, until ``calls`` tool results came back; then it answers."""
    return lambda messages: "done" if tool_results(messages) >= calls else stuck(messages)


def same_page(_arguments: dict[str, Any], _n: int) -> str:
    return "Acme: guidance will be published in March."


def test_a_repeated_call_with_the_same_result_is_stopped_at_the_next_model_call(rig: Rig) -> None:
    model = ScriptedModel(stuck)
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_loop(rig, model, same_page)
    trip = raised.value
    assert trip.detector == "tool_repeat"
    assert trip.evidence["calls_from_prompt"] is True and trip.evidence["identical_calls"] == 5
    assert model.calls == 5, "five model calls ran; the sixth, which would read the fifth identical result, did not"
    llm = rig.of_kind(Kind.LLM)
    assert len(llm) == 6 and len(rig.ran(Kind.LLM)) == 5
    blocked = [s for s in llm if (s.attributes or {}).get("spanbreaker.blocked")]
    assert len(blocked) == 1 and blocked[0].attributes["spanbreaker.detector"] == "tool_repeat"  # type: ignore[index]
    root = [s for s in rig.spans() if s.name == "research"]
    assert root and root[0].attributes["spanbreaker.tripped"] is True  # type: ignore[index]
    assert all(count == 1 for count in rig.ledger.ended.values()) and len(rig.ledger.ended) == 7


def test_the_async_client_is_stopped_the_same_way(rig: Rig) -> None:
    model = ScriptedModel(stuck)
    with pytest.raises(spanbreaker.Tripped) as raised:
        asyncio.run(run_async_loop(rig, model, achat_completion))
    assert raised.value.detector == "tool_repeat" and model.calls == 5


def test_the_responses_api_is_read_the_same_way(rig: Rig) -> None:
    model = ScriptedModel(stuck)
    client = client_for(model)
    items: list[Any] = [{"role": "user", "content": "find it"}]
    with pytest.raises(spanbreaker.Tripped) as raised, rig.provider.get_tracer("app").start_as_current_span("run"):
        for _ in range(TURNS):
            response = client.responses.create(model="gpt-4o-mini", input=items, tools=[  # type: ignore[arg-type]
                {"type": "function", "name": "search", "parameters": {"type": "object", "properties": {}}}])
            for item in response.output:
                if item.type == "function_call":
                    items.append({"type": "function_call", "call_id": item.call_id, "name": item.name,
                                  "arguments": item.arguments})
                    items.append({"type": "function_call_output", "call_id": item.call_id, "output": "same page"})
    assert raised.value.detector == "tool_repeat" and model.calls == 5


HEADLINES = ["Acme opens a plant in Ohio", "Regulators approve the Beta merger", "Gamma recalls its scooters",
             "Delta pilots reach a deal", "Epsilon shares fall on weak sales", "Zeta hires a new chief executive",
             "Eta wins the rail contract", "Theta settles the patent suit", "Iota cuts its dividend",
             "Kappa launches a cheaper phone", "Lambda delays the satellite", "Mu buys a robotics startup"]


def test_the_same_call_with_new_results_is_quiet(rig: Rig) -> None:
    """The same query, answered with new news each time (a feed the agent reads until it has enough)."""
    model = ScriptedModel(until(12))
    ran = run_loop(rig, model, lambda arguments, n: f"Latest: {HEADLINES[n - 1]}.")
    assert ran == 12 and not rig.tripped()


def test_polling_an_allowlisted_tool_is_quiet() -> None:
    """A poller on the allowlist (``allowlist``): the same call and the same answer, expected."""
    made = make_rig(allowlist=frozenset({"search"}))
    OpenAIInstrumentor().instrument(tracer_provider=made.provider)
    try:
        model = ScriptedModel(until(12))
        assert run_loop(made, model, lambda arguments, n: "job 42: running") == 12 and not made.tripped()
    finally:
        OpenAIInstrumentor().uninstrument()
        made.provider.shutdown()


def test_pagination_is_quiet(rig: Rig) -> None:
    def pages(messages: list[dict[str, Any]]) -> Reply:
        page = sum(1 for m in messages if m.get("role") == "tool") + 1
        return "read them all" if page > 12 else [("search", {"query": "acme filings", "page": page})]

    assert run_loop(rig, ScriptedModel(pages), same_page) == 12 and not rig.tripped()


def test_a_retried_request_counts_its_turn_once(rig: Rig) -> None:
    """Each request sent twice: the prompt's last turn is the same one, read once (else four loops read as eight)."""
    model = ScriptedModel(until(4))
    assert run_loop(rig, model, same_page, retry_each_call=True) == 4 and not rig.tripped()
    assert model.calls == 10


@pytest.mark.parametrize("wrap", [True, False], ids=["in-a-span", "no-span"])
def test_identical_calls_in_one_turn_count_once(rig: Rig, wrap: bool) -> None:
    """Three identical calls a turn (the model's parallel calls): one decision per turn, so the fifth turn trips,
    whether the turns are read one by one or all at once from an unwrapped call's prompt."""
    model = ScriptedModel(lambda messages: stuck(messages) * 3)
    with pytest.raises(spanbreaker.Tripped):
        run_loop(rig, model, same_page, wrap=wrap)
    assert model.calls == 5


def test_tool_spans_of_the_application_are_not_counted_twice(rig: Rig) -> None:
    """An application that traces its own tool calls: the breaker reads those spans, not the prompts (four identical
    calls stay under the limit whichever way they were counted once)."""
    tracer = rig.provider.get_tracer("app")

    def traced(arguments: dict[str, Any], n: int) -> str:
        start = {"openinference.span.kind": "TOOL", "tool.name": "search", "input.value": json.dumps(arguments)}
        with tracer.start_as_current_span("search", attributes=start) as span:
            span.set_attribute("output.value", "same page")
        return "same page"

    model = ScriptedModel(until(4))
    assert run_loop(rig, model, traced) == 4 and not rig.tripped()
    assert rig.processor.engine.stats.trips == 0


def test_a_loop_with_no_span_around_it_is_stopped_the_same_way(rig: Rig) -> None:
    """No span of the application's around the loop: each model call is a trace of its own, and its prompt is the
    only record of the run. The trace's first model call reads every turn since the user's request, so the loop is
    stopped where a traced one is: the sixth call, which would read the fifth identical result, is vetoed."""
    model = ScriptedModel(stuck)
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_loop(rig, model, same_page, wrap=False)
    trip = raised.value
    assert trip.detector == "tool_repeat" and trip.evidence["calls_from_prompt"] is True
    assert trip.evidence["identical_calls"] == 5
    assert model.calls == 5
    llm = rig.of_kind(Kind.LLM)
    assert len({span.context.trace_id for span in llm}) == 6, "one trace per model call"  # type: ignore[union-attr]
    blocked = [s for s in llm if (s.attributes or {}).get("spanbreaker.blocked")]
    assert len(blocked) == 1 and blocked[0].attributes["spanbreaker.tripped"] is True  # type: ignore[index]


def test_a_loop_with_no_span_around_it_that_moved_on_is_quiet(rig: Rig) -> None:
    """Unwrapped, the same call with new results each time, and a run that repeated itself four times and then
    moved on: each call's prompt holds the whole run, read anew, and none of it is a loop now."""
    model = ScriptedModel(until(12))
    assert run_loop(rig, model, lambda arguments, n: f"Latest: {HEADLINES[n - 1]}.", wrap=False) == 12
    assert not rig.tripped()

    def four_then_new(messages: list[dict[str, Any]]) -> Reply:
        done = tool_results(messages)
        if done >= 10:
            return "done"
        return stuck(messages) if done < 4 else [("search", {"query": f"acme filing {done}"})]

    assert run_loop(rig, ScriptedModel(four_then_new), same_page, wrap=False) == 10 and not rig.tripped()


def test_a_new_user_request_starts_a_new_run(rig: Rig) -> None:
    """A chat whose history holds an earlier request's four identical calls: the user asks again, the model calls
    the same tool once more, and that is one call of a new run, not a fifth repeat (unwrapped calls)."""
    client = client_for(ScriptedModel(lambda messages: "ok"))
    call = {"id": "c{}", "type": "function", "function": {"name": "search", "arguments": '{"query": "acme"}'}}
    messages: list[dict[str, Any]] = [{"role": "user", "content": "find it"}]
    for n in range(4):
        messages.append({"role": "assistant", "tool_calls": [{**call, "id": f"c{n}"}]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": "same page"})
    messages += [{"role": "assistant", "content": "It is the same page."}, {"role": "user", "content": "again"},
                 {"role": "assistant", "tool_calls": [{**call, "id": "c9"}]},
                 {"role": "tool", "tool_call_id": "c9", "content": "same page"}]
    client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
    assert not rig.tripped()
    del messages[9:]  # the same five calls as one request's run: a loop
    messages += [{"role": "assistant", "tool_calls": [{**call, "id": "c9"}]},
                 {"role": "tool", "tool_call_id": "c9", "content": "same page"}]
    with pytest.raises(spanbreaker.Tripped):
        client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)  # type: ignore[arg-type]


def test_a_conversation_in_one_trace_starts_a_new_run_at_each_user_request(rig: Rig) -> None:
    """A chat app's conversation in one trace: the user asks six times, the model looks the same thing up once per
    request and answers. Six identical calls with the same result, but each for a new request: not a loop. The
    same six calls within one request trip (the first test)."""
    def assistant(messages: list[dict[str, Any]]) -> Reply:
        return stuck(messages) if messages[-1]["role"] == "user" else "It will be published in March."

    model = ScriptedModel(assistant)
    client = client_for(model)
    messages: list[dict[str, Any]] = []
    with rig.provider.get_tracer("app").start_as_current_span("conversation"):
        for question in range(6):
            messages.append({"role": "user", "content": f"Any news on Acme's guidance? ({question})"})
            for _ in range(3):
                message = client.chat.completions.create(model="gpt-4o-mini", messages=messages,  # type: ignore[arg-type]
                                                         tools=TOOLS).choices[0].message  # type: ignore[arg-type]
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    break
                messages += [{"role": "tool", "tool_call_id": call.id, "content": same_page({}, 0)}
                             for call in message.tool_calls]
    assert model.calls == 12 and not rig.tripped()


def test_an_anthropic_loop_is_read_the_same_way() -> None:
    """The real Anthropic client under OpenInference's Anthropic instrumentor: its request (``input.value``) ends with
    the ``tool_use`` blocks and the ``tool_result`` blocks that answer them."""
    import anthropic
    from openinference.instrumentation.anthropic import AnthropicInstrumentor

    made = make_rig()
    AnthropicInstrumentor().instrument(tracer_provider=made.provider)
    model = ScriptedModel(stuck, model="claude-sonnet-4-5")
    client = model.client(anthropic.Anthropic, api_key="offline", base_url="http://scripted.invalid")
    messages: list[Any] = [{"role": "user", "content": "find it"}]
    tools: Any = [{"name": "search", "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}}]
    try:
        with pytest.raises(spanbreaker.Tripped) as raised, made.provider.get_tracer("app").start_as_current_span("run"):
            for _ in range(TURNS):
                reply = client.messages.create(model="claude-sonnet-4-5", max_tokens=256, messages=messages,
                                               tools=tools)
                messages.append({"role": "assistant", "content": reply.content})
                messages.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": block.id, "content": "same page"}
                    for block in reply.content if block.type == "tool_use"]})
    finally:
        AnthropicInstrumentor().uninstrument()
        made.provider.shutdown()
    assert raised.value.detector == "tool_repeat" and raised.value.evidence["calls_from_prompt"] is True
    assert model.calls == 5
