"""Model prices from the maintained ``genai-prices`` table (pydantic's), cached per model.

The table is consulted once per (provider, model) for the price of a million input and a million output
tokens; later calls multiply. Tiered or cached-token prices are approximated by the base rate. Unknown
models cost nothing here (and ``cost_budget`` cannot trip on them): set ``llm.cost.total`` on spans or a
token budget instead.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from decimal import Decimal
from typing import Any

_MILLION = 1_000_000
_cache: dict[tuple[str | None, str | None], tuple[float, float] | None] = {}
_lock = threading.Lock()
_loaders: list[threading.Thread] = []
"""The background loads :func:`prewarm` started (a replay's ``--jobs`` waits for them before it forks)."""


def _lookup(model: str, provider: str | None) -> tuple[float, float] | None:
    try:
        from genai_prices import Usage, calc_price
    except ImportError:  # a broken install: prices stay unknown (budgets then count only reported costs)
        return None
    try:
        prices = []
        for usage in (Usage(input_tokens=_MILLION, output_tokens=0), Usage(input_tokens=0, output_tokens=_MILLION)):
            result = calc_price(usage, model_ref=model, provider_id=provider) if provider else calc_price(
                usage, model_ref=model)
            prices.append(float(Decimal(result.total_price)) / _MILLION)
        return prices[0], prices[1]
    except Exception:
        if provider:
            return _lookup(model, None)
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


def price_per_token(model: str | None, provider: str | None = None) -> tuple[float, float] | None:
    """USD per (input token, output token), or None when the model is unknown."""
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


_UNKNOWN = object()


def cost_usd(model: str | None, provider: str | None, prompt_tokens: int | None,
             completion_tokens: int | None) -> float:
    cached: Any = _cache.get((provider, model), _UNKNOWN)  # the cache hit without a call (all calls but the first)
    prices: tuple[float, float] | None = price_per_token(model, provider) if cached is _UNKNOWN else cached
    if prices is None:
        return 0.0
    return (prompt_tokens or 0) * prices[0] + (completion_tokens or 0) * prices[1]
