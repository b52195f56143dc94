"""Model prices from the maintained ``genai-prices`` table (pydantic's), cached per model.

The table is consulted once per (provider, model) for its base rates: a token of input, of output, of input read
from the provider's prompt cache and of input written to it. Later calls multiply: a few float operations per model
call, where the table's own calculation takes 50-90 us. Two things the plain rates would get wrong are priced as
the table prices them:

* **Cached input.** A prompt's count includes the tokens read from or written to the prompt cache (OpenInference,
  the GenAI conventions, OpenLLMetry and genai-prices agree on that), and a cache read costs a tenth to a half of
  an input token. An agent re-sends its growing history every turn, so with caching on most of its input is cache
  reads: priced as plain input, a run's cost was overstated several times over and ``cost_budget`` tripped early.
* **Price tiers.** Some models cost more per token once a request's input passes a threshold (Gemini's 200k, some
  OpenAI models' 272k; the table's lowest is 32k). The base rates hold below the model's lowest threshold; a call
  past it is priced by the table itself, exactly (rare, and such a call is itself large).

A model is looked up as the span names it, under its provider when the span says it, else by name alone, a
LiteLLM-style ``provider/model`` name under the provider its prefix names, and an Amazon Bedrock id under Bedrock.
Unknown models cost nothing here (and ``cost_budget`` cannot trip on them): set ``llm.cost.total`` on spans or a
token budget instead.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .signals import ModelCall

_PROBE = 1_000
"""Tokens per probe of the table: below every tier threshold (the lowest is 32k), so a probe reads base rates."""
_cache: dict[tuple[str | None, str | None], _Rates | None] = {}
_lock = threading.Lock()
_loaders: list[threading.Thread] = []
"""The background loads :func:`prewarm` started (a replay's ``--jobs`` waits for them before it forks)."""

_Rates = tuple[float, float, float, float, int, Any]
"""USD per token of (input, output, cache read, cache write); the prompt size past which a price tier applies (a
huge number when the model has none); the table's ``ModelPrice`` that prices such a call exactly. A tuple: read on
every model call, a tuple item is cheaper than an attribute."""
_NO_TIER = sys.maxsize
_LITELLM = "litellm"
"""The provider under which genai-prices reads a LiteLLM model name (``provider/model``, as LiteLLM, smolagents'
``LiteLLMModel`` and many agent harnesses name models) as that provider's model; a prefix it does not know (a
self-hosted ``hosted_vllm/...``) stays unpriced."""
_AWS = "aws"
_BEDROCK_ID = re.compile(r"(?:(?:us|eu|apac|global|us-gov|jp|au|ca)\.)?(?:anthropic|amazon|meta|mistral|cohere|ai21|"
                         r"deepseek|openai|qwen|writer|moonshot|minimax|google|nvidia)\.[a-z0-9]")
"""An Amazon Bedrock model id (``anthropic.claude-...-v1:0``, with a cross-region prefix ``us.`` / ``eu.`` /
``global.``), priced under Bedrock when no other lookup knows it: the table knows these ids only under its ``aws``
provider, and spans often name another (``anthropic``, Strands' ``strands-agents``) or none."""


def _lookup(model: str, provider: str | None, retry: bool = True) -> _Rates | None:
    try:
        from genai_prices import Usage, calc_price
        from genai_prices.types import TieredPrices
    except ImportError:  # a broken install: prices stay unknown (budgets then count only reported costs)
        return None
    try:
        def price(usage: Any) -> Any:
            return calc_price(usage, model_ref=model, provider_id=provider) if provider else calc_price(
                usage, model_ref=model)

        found = price(Usage(input_tokens=_PROBE))
        rates = [float(Decimal(found.total_price)) / _PROBE]
        for usage in (Usage(input_tokens=0, output_tokens=_PROBE), Usage(input_tokens=_PROBE, cache_read_tokens=_PROBE),
                      Usage(input_tokens=_PROBE, cache_write_tokens=_PROBE)):
            rates.append(float(Decimal(price(usage).total_price)) / _PROBE)
        model_price = found.model_price
        starts = [tier.start for value in vars(model_price).values() if isinstance(value, TieredPrices)
                  for tier in value.tiers]
        return rates[0], rates[1], rates[2], rates[3], min(starts, default=_NO_TIER), model_price
    except Exception:
        if not retry:
            return None
        if provider and provider != _LITELLM:
            return _lookup(model, None)
        if provider is None and "/" in model:  # LiteLLM's "anthropic/claude-...": the table reads the prefix
            return _lookup(model, _LITELLM)
        if _BEDROCK_ID.match(model):
            return _lookup(model, _AWS, retry=False)
        return None


def prewarm() -> None:
    """Load the price table in the background: its first import takes a few hundred milliseconds, which would
    otherwise land on the agent's first model call."""

    def load() -> None:
        with contextlib.suppress(Exception):  # a broken install: prices stay unknown
            import genai_prices  # noqa: F401

    if "genai_prices" in sys.modules or any(loader.is_alive() for loader in _loaders):
        return
    loader = threading.Thread(target=load, name="spanbreaker-prices", daemon=True)
    _loaders[:] = [loader]
    loader.start()


def wait_loaded(timeout: float) -> None:
    """Wait (at most ``timeout`` seconds) for the background load :func:`prewarm` started, if any."""
    for loader in list(_loaders):
        loader.join(timeout)


def _rates(model: str | None, provider: str | None) -> _Rates | None:
    if not model:
        return None
    key = (provider, model)
    try:
        return _cache[key]
    except KeyError:
        pass
    value = _lookup(model, provider)
    with _lock:
        if len(_cache) < 4096:
            _cache[key] = value
    return value


def price_per_token(model: str | None, provider: str | None = None) -> tuple[float, float] | None:
    """USD per (input token, output token) at the model's base rates, or None when the model is unknown."""
    rates = _rates(model, provider)
    return None if rates is None else (rates[0], rates[1])


_UNKNOWN = object()


def cost_usd(model: str | None, provider: str | None, prompt_tokens: int | None, completion_tokens: int | None,
             cache_read_tokens: int = 0, cache_write_tokens: int = 0) -> float:
    """A model call's price in USD. ``prompt_tokens`` includes the cached ones; where an instrumentor reported it
    without them (the cache counts exceed it), they are added."""
    found: Any = _cache.get((provider, model), _UNKNOWN)  # the cache hit without a call (all calls but the first)
    rates: _Rates | None = _rates(model, provider) if found is _UNKNOWN else found
    if rates is None:
        return 0.0
    prompt = prompt_tokens or 0
    cached = cache_read_tokens + cache_write_tokens
    if cached > prompt:
        prompt += cached
    if prompt > rates[4]:
        return _tiered(rates[5], prompt, completion_tokens or 0, cache_read_tokens, cache_write_tokens)
    return ((prompt - cached) * rates[0] + (completion_tokens or 0) * rates[1] + cache_read_tokens * rates[2]
            + cache_write_tokens * rates[3])


def call_cost(call: ModelCall) -> float:
    """What a model call cost: the cost its span reports, else its tokens priced by the table."""
    if call.cost_usd is not None:
        return call.cost_usd
    return cost_usd(call.model, call.provider, call.prompt_tokens, call.completion_tokens, call.cache_read_tokens,
                    call.cache_write_tokens)


def _tiered(model_price: Any, prompt: int, completion: int, cache_read: int, cache_write: int) -> float:
    """A call past its model's lowest price tier, priced by the table (which tier applies to which count)."""
    try:
        from genai_prices import Usage

        usage = Usage(input_tokens=prompt, output_tokens=completion, cache_read_tokens=cache_read,
                      cache_write_tokens=cache_write)
        return float(Decimal(model_price.calc_price(usage)["total_price"]))
    except Exception:  # a table that changed its API: no price rather than a broken call
        return 0.0
