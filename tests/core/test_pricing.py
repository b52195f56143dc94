"""Model call prices: the cached base rates give what genai-prices' own calculation gives, for cached input and past a
price tier too; the cache counts are read under every convention's name."""

from __future__ import annotations

import pytest
from genai_prices import Usage, calc_price

from spanbreaker.conventions.read import fill_model_result
from spanbreaker.pricing import cost_usd, price_per_token
from spanbreaker.signals import ModelCall

CALLS = [  # (prompt tokens, completion tokens, of the prompt: cache read, cache write)
    (1_000, 100, 0, 0),
    (120_000, 400, 100_000, 0),
    (120_000, 400, 0, 20_000),
    (120_000, 400, 90_000, 10_000),
    (260_000, 400, 240_000, 0),  # past Gemini's and Claude Sonnet 4.5's 200k tier
    (300_000, 400, 0, 0),
]


def table(model: str, prompt: int, completion: int, read: int, write: int) -> float:
    usage = Usage(input_tokens=prompt, output_tokens=completion, cache_read_tokens=read, cache_write_tokens=write)
    return float(calc_price(usage, model_ref=model).total_price)


@pytest.mark.parametrize("model", ["gpt-4o", "claude-sonnet-4-5", "gemini-3-pro-preview", "gemini-2.5-pro",
                                   "gpt-4-1106-preview", "o1"])
@pytest.mark.parametrize(("prompt", "completion", "read", "write"), CALLS)
def test_a_calls_cost_is_the_tables(model: str, prompt: int, completion: int, read: int, write: int) -> None:
    assert cost_usd(model, None, prompt, completion, read, write) == pytest.approx(
        table(model, prompt, completion, read, write), rel=1e-9)


def test_base_rates_are_below_every_tier() -> None:
    """Gemini 3 Pro costs $2 per million input tokens up to 200k a request, $4 past it: the base rate is $2 (it was
    read at a million tokens, the top tier, and a 1,000-token call was priced at $4)."""
    per_input, _ = price_per_token("gemini-3-pro-preview") or (0.0, 0.0)
    assert per_input == pytest.approx(2e-6)
    assert cost_usd("gemini-3-pro-preview", None, 1_000, 0) == pytest.approx(0.002)


def test_a_prompt_count_without_its_cached_part_is_completed() -> None:
    """An instrumentor that reported the uncached input alone (the cache counts exceed it): the cached tokens are
    added to it, as Anthropic's own usage is read."""
    assert cost_usd("claude-sonnet-4-5", None, 200, 20, 8_000, 800) == pytest.approx(
        table("claude-sonnet-4-5", 9_000, 20, 8_000, 800), rel=1e-9)


def test_unknown_models_cost_nothing() -> None:
    assert cost_usd("a-model-no-table-knows", None, 10_000, 1_000, 5_000, 0) == 0.0
    assert cost_usd(None, None, 10_000, 1_000) == 0.0


@pytest.mark.parametrize(("read_key", "write_key"), [
    ("llm.token_count.prompt_details.cache_read", "llm.token_count.prompt_details.cache_write"),  # OpenInference
    ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_creation.input_tokens"),  # GenAI conventions
    ("gen_ai.usage.cache_read_input_tokens", "gen_ai.usage.cache_creation_input_tokens"),  # OpenLLMetry 0.4x
])
def test_cache_counts_are_read_under_each_conventions_name(read_key: str, write_key: str) -> None:
    call = ModelCall(None)
    fill_model_result(call, {"gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 10_000,
                             "gen_ai.usage.output_tokens": 50, read_key: 8_000, write_key: "1000"}, 4096)
    assert (call.prompt_tokens, call.cache_read_tokens, call.cache_write_tokens) == (10_000, 8_000, 1_000)


@pytest.mark.parametrize("value", [-5, "-5", "lots", None, True, [1]])
def test_odd_cache_counts_read_as_no_cache(value: object) -> None:
    call = ModelCall(None)
    fill_model_result(call, {"llm.token_count.prompt": 100, "llm.token_count.prompt_details.cache_read": value}, 4096)
    assert call.cache_read_tokens == 0


@pytest.mark.parametrize(("name", "as_named"), [
    ("anthropic/claude-3-5-sonnet-20241022", "claude-3-5-sonnet-20241022"),
    ("openai/gpt-4o", "gpt-4o"),
    ("gemini/gemini-2.5-pro", "gemini-2.5-pro"),
    ("deepseek/deepseek-chat", "deepseek-chat"),
])
def test_litellm_model_names_are_priced_as_their_providers_model(name: str, as_named: str) -> None:
    """LiteLLM (and smolagents' ``LiteLLMModel``, and harnesses built on it) name a model ``provider/model``: priced
    as that provider's model (before, such a call cost nothing and ``cost_budget`` never counted it)."""
    priced = cost_usd(name, None, 10_000, 500)
    assert priced > 0 and priced == pytest.approx(cost_usd(as_named, None, 10_000, 500))


def test_a_prefix_the_table_does_not_know_stays_unpriced() -> None:
    """A self-hosted model behind LiteLLM is not priced as some provider's model of a similar name."""
    assert cost_usd("hosted_vllm/Qwen/Qwen2.5-72B-Instruct", None, 10_000, 500) == 0.0


@pytest.mark.parametrize("provider", [None, "anthropic", "strands-agents"])
@pytest.mark.parametrize("model", [
    "anthropic.claude-3-haiku-20240307-v1:0",
    "us.anthropic.claude-sonnet-4-20250514-v1:0",
    "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "eu.amazon.nova-lite-v1:0",
    "meta.llama3-70b-instruct-v1:0",
])
def test_bedrock_model_ids_are_priced_as_bedrocks(model: str, provider: str | None) -> None:
    """An Amazon Bedrock id is known to the table only under its ``aws`` provider. Spans name another provider
    (Strands' own spans say ``strands-agents``, and its default model is a Bedrock Claude) or none: before, such a
    call cost nothing and ``cost_budget`` never counted it."""
    priced = cost_usd(model, provider, 10_000, 500)
    assert priced > 0 and priced == pytest.approx(cost_usd(model, "aws", 10_000, 500))


def test_a_name_that_only_looks_like_a_bedrock_id_stays_unpriced() -> None:
    assert cost_usd("anthropic.my-own-finetune", None, 10_000, 500) == 0.0
    assert cost_usd("my-company.claude-clone", "strands-agents", 10_000, 500) == 0.0
