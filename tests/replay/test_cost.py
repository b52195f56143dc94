"""Replay's figures of what a run spent and what a trip would have saved, in tokens and in dollars, are counted the way
the breaker counts its budgets: every convention's usage names, a prompt's cached part at the cache's rates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from genai_prices import Usage, calc_price

from spanbreaker.config import BreakerConfig
from spanbreaker.detectors import DETECTOR_IDS
from spanbreaker.replay import replay

from . import traces as t


def priced(name: str, steps: int, usage: list[dict[str, Any]], model: str = "gpt-4o") -> list[dict[str, Any]]:
    """The looping agent with its model named ``model`` and each model call's usage attributes replaced by
    ``usage`` (one entry per step, the last repeated)."""
    spans = t.looping(name, steps=steps)
    calls = [s for s in spans if s["name"] == "ScriptedModel.generate"]
    for index, span in enumerate(calls):
        attributes = [a for a in span["attributes"] if not a["key"].startswith("llm.token_count")
                      and a["key"] != "llm.model_name"]
        attributes.append(t.attr("llm.model_name", model))
        attributes += [t.attr(k, v) for k, v in usage[min(index, len(usage) - 1)].items()]
        span["attributes"] = attributes
    return spans


def table(model: str, prompt: int, completion: int, read: int = 0) -> float:
    return float(calc_price(Usage(input_tokens=prompt, output_tokens=completion, cache_read_tokens=read),
                            model_ref=model).total_price)


def test_cost_after_a_trip_is_the_tables_price_of_the_calls_after_it(tmp_path: Path) -> None:
    usage = {"llm.token_count.prompt": 20_000, "llm.token_count.completion": 100,
             "llm.token_count.prompt_details.cache_read": 16_000}
    path = t.write_lines(tmp_path / "loop.jsonl", [t.request(priced("cached", 12, [usage]))])
    [result] = list(replay(path, BreakerConfig()))
    assert result.tripped and result.step_index is not None
    per_call = table("gpt-4o", 20_000, 100, 16_000)
    assert result.cost_usd == pytest.approx(12 * per_call)
    later = len(result.steps) - result.step_index - 1
    assert later > 0 and result.cost_after_trip_usd == pytest.approx(later * per_call)
    line = result.as_json()
    assert line["cost_usd"] == pytest.approx(12 * per_call) and line["cost_after_trip_usd"] == pytest.approx(
        later * per_call)


def test_tokens_are_read_under_every_conventions_names_and_counted_once(tmp_path: Path) -> None:
    """GenAI counts alone (no total) give prompt + completion; a span carrying both OpenInference's and the GenAI
    names for one call counts it once (the replay's own reading used to add all four)."""
    genai = {"gen_ai.usage.input_tokens": 1_000, "gen_ai.usage.output_tokens": 20}
    both = {"llm.token_count.prompt": 1_000, "llm.token_count.completion": 20, **genai}
    path = t.write_lines(tmp_path / "two.jsonl", [t.request(priced("genai", 3, [genai])),
                                                  t.request(priced("both", 3, [both]))])
    results = list(replay(path, BreakerConfig()))
    assert [r.tokens for r in results] == [3 * 1_020, 3 * 1_020]
    assert all(r.cost_usd == pytest.approx(3 * table("gpt-4o", 1_000, 20)) for r in results)


def test_the_cli_shows_cost_saved_only_where_a_model_has_a_price(tmp_path: Path) -> None:
    from .test_cli import run_cli

    usage = {"llm.token_count.prompt": 20_000, "llm.token_count.completion": 100}
    priced_file = t.write_lines(tmp_path / "priced.jsonl", [t.request(priced("p", 12, [usage]))])
    unpriced_file = t.write_lines(tmp_path / "unpriced.jsonl", [t.request(t.looping("u"))])  # model "scripted"
    shown = run_cli("replay", str(priced_file))
    assert shown.returncode == 0 and "cost saved" in shown.stdout
    hidden = run_cli("replay", str(unpriced_file))
    assert hidden.returncode == 0 and "tokens saved" in hidden.stdout and "cost saved" not in hidden.stdout
    [line] = [json.loads(text) for text in run_cli("replay", str(priced_file), "--json").stdout.splitlines()]
    assert line["tripped"] and line["cost_after_trip_usd"] > 0


def test_a_model_calls_usage_is_read_once_where_the_engine_counted_it(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-step figures take each model call's tokens and cost from the engine's own count toward the budgets;
    only calls the engine no longer reads (after the trace's trip) are read again, so the figures are the same."""
    from spanbreaker.replay import runner

    read_again: list[int] = []
    real = runner._usage

    def counting(span: Any) -> tuple[int, float]:
        read_again.append(span.span_id)
        return real(span)

    monkeypatch.setattr(runner, "_usage", counting)
    usage = {"llm.token_count.prompt": 20_000, "llm.token_count.completion": 100}
    path = t.write_lines(tmp_path / "loop.jsonl", [t.request(priced("loop", 12, [usage]))])
    [result] = list(replay(path, BreakerConfig()))
    assert result.tripped and result.step_index is not None
    later = len(result.steps) - result.step_index - 1
    assert later > 0 and len(read_again) == later  # the calls after the trip's step, and no other
    assert result.cost_usd == pytest.approx(12 * table("gpt-4o", 20_000, 100))
    read_again.clear()
    budgets_only = frozenset(DETECTOR_IDS) - {"call_budget", "token_budget", "cost_budget"}
    [quiet] = list(replay(path, BreakerConfig(disabled_detectors=budgets_only)))
    assert not quiet.tripped and read_again == []
    assert quiet.tokens == result.tokens and quiet.cost_usd == pytest.approx(result.cost_usd)
