"""Cost budgets price a prompt's cached part at the cache's rates, and a call past its model's price tier at the tier's.

An agent re-sends its growing history every turn; with prompt caching on, most of each prompt is read from the cache
at a tenth of the input price (Anthropic) or half (OpenAI). The real Anthropic and OpenAI clients under OpenInference's
instrumentors report the cached part (``llm.token_count.prompt_details.cache_read`` / ``cache_write``) beside the
prompt count that includes it; priced as plain input, a healthy cached run looked several times dearer than it was
and ``cost_budget`` stopped it. The model is the only stub (an in-process HTTP transport)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from genai_prices import Usage, calc_price

import spanbreaker

from ..genai_rig import Rig, make_rig
from .scripted import Reply, ScriptedModel, tool_results

TURNS = 12
"""Tool calls the healthy agent makes, each with a new query, before it answers."""


def researching(messages: list[Any]) -> Reply:
    done = tool_results(messages)
    return "done" if done >= TURNS else [("search", {"query": f"acme filing {done}"})]


def anthropic_results(messages: list[Any]) -> int:
    return sum(1 for m in messages if m["role"] == "user" and isinstance(m["content"], list)
               for block in m["content"] if block.get("type") == "tool_result")


def anthropic_researching(messages: list[Any]) -> Reply:
    done = anthropic_results(messages)
    return "done" if done >= TURNS else [("search", {"query": f"acme filing {done}"})]


def cached_history(call: int) -> dict[str, int]:
    """Anthropic's usage on call ``call``: the history so far read from the cache, the new turn written to it."""
    return {"input_tokens": 200, "cache_read_input_tokens": 8_000 * call, "cache_creation_input_tokens": 800,
            "output_tokens": 20}


def uncached_history(call: int) -> dict[str, int]:
    """The same tokens sent without a cache."""
    return {"input_tokens": 200 + 8_000 * call + 800, "output_tokens": 20}


def table_price(model: str, calls: int, usage: Callable[[int], dict[str, int]]) -> float:
    """What ``calls`` calls cost by genai-prices' own calculation (its Anthropic usage: input includes the cache)."""
    total = 0.0
    for call in range(1, calls + 1):
        u = usage(call)
        read, write = u.get("cache_read_input_tokens", 0), u.get("cache_creation_input_tokens", 0)
        total += float(calc_price(Usage(input_tokens=u["input_tokens"] + read + write, cache_read_tokens=read,
                                        cache_write_tokens=write, output_tokens=u["output_tokens"]),
                                  model_ref=model).total_price)
    return total


def run_anthropic(rig: Rig, model: ScriptedModel) -> None:
    import anthropic

    client = model.client(anthropic.Anthropic, api_key="offline", base_url="http://scripted.invalid")
    messages: list[Any] = [{"role": "user", "content": "find the filing"}]
    tools: Any = [{"name": "search", "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}}]
    with rig.provider.get_tracer("app").start_as_current_span("research"):
        for _ in range(TURNS + 1):
            reply = client.messages.create(model=model.model, max_tokens=256, messages=messages, tools=tools)
            uses = [block for block in reply.content if block.type == "tool_use"]
            if not uses:
                return
            messages.append({"role": "assistant", "content": reply.content})
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": block.id, "content": f"page for {block.input['query']}"}
                for block in uses]})


@pytest.fixture
def anthropic_rigs() -> Any:
    from openinference.instrumentation.anthropic import AnthropicInstrumentor

    made: list[Rig] = []

    def make(**config: Any) -> Rig:
        """A rig with the instrumentor on its provider (moved off the previous rig's: it instruments once)."""
        if made:
            AnthropicInstrumentor().uninstrument()
        rig = make_rig(**config)
        made.append(rig)
        AnthropicInstrumentor().instrument(tracer_provider=rig.provider)
        return rig

    yield make
    AnthropicInstrumentor().uninstrument()
    for rig in made:
        rig.provider.shutdown()


def test_a_cached_history_is_priced_at_the_cache_rate_and_the_run_finishes(anthropic_rigs: Any) -> None:
    model_name = "claude-sonnet-4-5"
    cached = table_price(model_name, TURNS + 1, cached_history)
    uncached = table_price(model_name, TURNS + 1, uncached_history)
    assert uncached > 4 * cached, "the scenario: the same tokens uncached cost several times more"
    budget = 1.5 * cached
    rig = anthropic_rigs(max_cost_usd=budget)
    model = ScriptedModel(anthropic_researching, model=model_name, usage=cached_history)
    run_anthropic(rig, model)
    assert model.calls == TURNS + 1 and not rig.tripped()
    # The look-alike that must still trip: the same tokens, none from a cache, over the same budget.
    rig = anthropic_rigs(max_cost_usd=budget)
    model = ScriptedModel(anthropic_researching, model=model_name, usage=uncached_history)
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_anthropic(rig, model)
    assert raised.value.detector == "cost_budget" and model.calls < TURNS + 1
    spent = raised.value.evidence["cost_usd"]
    assert spent == pytest.approx(table_price(model_name, model.calls, uncached_history), rel=1e-6)


def assert_trips_at_the_tables_cost(anthropic_rigs: Any, usage: Callable[[int], dict[str, int]], calls: int) -> None:
    """With the budget set just under what ``calls`` calls cost by the table, the trip comes after exactly ``calls``
    calls and its evidence carries that cost, to the table's own figure."""
    model_name = "claude-sonnet-4-5"
    rig = anthropic_rigs(max_cost_usd=table_price(model_name, calls, usage) * 0.999)
    model = ScriptedModel(anthropic_researching, model=model_name, usage=usage)
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_anthropic(rig, model)
    assert raised.value.detector == "cost_budget" and model.calls == calls
    assert raised.value.evidence["cost_usd"] == pytest.approx(table_price(model_name, calls, usage), rel=1e-6)


def test_the_cost_at_a_trip_is_the_tables_for_cached_calls(anthropic_rigs: Any) -> None:
    """Cache reads and writes at their rates."""
    assert_trips_at_the_tables_cost(anthropic_rigs, cached_history, TURNS)


def test_a_call_past_the_models_price_tier_is_priced_at_the_tier(anthropic_rigs: Any) -> None:
    """claude-sonnet-4-5 costs more per token once a request's input passes 200k tokens (the whole call at the higher
    rate, as the provider bills it): the base rate would undercount such a call. Calls 3-5 here pass 200k."""

    def long_context(call: int) -> dict[str, int]:
        return {"input_tokens": 1_000, "cache_read_input_tokens": 140_000 + 20_000 * call, "output_tokens": 20}

    assert_trips_at_the_tables_cost(anthropic_rigs, long_context, 5)


def test_openai_cached_tokens_are_priced_at_the_cache_rate() -> None:
    import openai
    from openinference.instrumentation.openai import OpenAIInstrumentor

    def cached(call: int) -> dict[str, Any]:
        prompt = 1_000 + 8_000 * call
        return {"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20,
                "prompt_tokens_details": {"cached_tokens": 8_000 * call}}

    def expected(calls: int) -> float:
        return sum(float(calc_price(Usage(input_tokens=1_000 + 8_000 * n, cache_read_tokens=8_000 * n,
                                          output_tokens=20), model_ref="gpt-4o").total_price)
                   for n in range(1, calls + 1))

    rig = make_rig(max_cost_usd=expected(TURNS) * 0.999)
    OpenAIInstrumentor().instrument(tracer_provider=rig.provider)
    model = ScriptedModel(researching, model="gpt-4o", usage=cached)
    client = model.client(openai.OpenAI, api_key="offline", base_url="http://scripted.invalid/v1")
    messages: list[Any] = [{"role": "user", "content": "find the filing"}]
    try:
        with pytest.raises(spanbreaker.Tripped) as raised, rig.provider.get_tracer("app").start_as_current_span("run"):
            for _ in range(TURNS + 1):
                reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=[{
                    "type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}])
                message = reply.choices[0].message
                if not message.tool_calls:
                    break
                messages.append(message.model_dump(exclude_none=True))
                messages += [{"role": "tool", "tool_call_id": call.id, "content": f"page {call.function.arguments}"}
                             for call in message.tool_calls]
    finally:
        OpenAIInstrumentor().uninstrument()
        rig.provider.shutdown()
    assert raised.value.detector == "cost_budget" and model.calls == TURNS
    assert raised.value.evidence["cost_usd"] == pytest.approx(expected(TURNS), rel=1e-6)
