"""Semantic Kernel's agents and auto function calling with the breaker: a ``ChatCompletionAgent`` (or a kernel's own
auto function calling) looping on one search is stopped at the fifth identical call, before it runs, whatever Semantic
Kernel's diagnostics settings (off, its default; on; sensitive), and ``spanbreaker.Tripped`` comes out of the agent's
call. Stock, only its sensitive diagnostics put a call's arguments on its span, just after it starts: the fifth call
ran and the sixth model call was vetoed, and on its defaults the loop ran all 30 attempts. Real Semantic Kernel, real
SDK; the model is the only stub."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import spanbreaker
from spanbreaker.signals import Kind

from ..genai_rig import Rig
from ..openai_client.scripted import ScriptedModel, tool_results
from .conftest import DIAGNOSTICS
from .scripted import ATTEMPTS, RUNS, TOOL, SearchPlugin, run_agent, stuck, wide

Make = Callable[..., Rig]


@pytest.mark.parametrize("mode", sorted(RUNS))
@pytest.mark.parametrize("diagnostics", list(DIAGNOSTICS))
def test_a_loop_is_stopped_at_the_fifth_identical_call_before_it_runs(make_env: Make, diagnostics: str,
                                                                      mode: str) -> None:
    rig = make_env(diagnostics=diagnostics)
    model, plugin = ScriptedModel(stuck), SearchPlugin()
    with pytest.raises(spanbreaker.Tripped) as raised:
        RUNS[mode](model, plugin)
    trip = raised.value
    assert trip.detector == "tool_repeat" and trip.evidence["identical_calls"] == 5
    assert len(plugin.queries) == 4 and model.calls == 5, "the fifth search was vetoed before it ran"
    blocked = rig.blocked()
    assert [s.name for s in blocked] == [f"execute_tool {TOOL}"]
    assert blocked[0].attributes["spanbreaker.tripped"] is True  # type: ignore[index]
    rig.assert_nothing_lost()
    if diagnostics != "sensitive":  # nothing was added to the spans
        assert not any("gen_ai.tool.call.arguments" in (s.attributes or {}) for s in rig.spans())


def test_a_streamed_agent_is_stopped_the_same(make_env: Make) -> None:
    rig = make_env(diagnostics="on")
    model, plugin = ScriptedModel(stuck), SearchPlugin()
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_agent(model, plugin, stream=True)
    assert raised.value.detector == "tool_repeat" and len(plugin.queries) == 4
    rig.assert_nothing_lost()


@pytest.mark.parametrize("diagnostics", list(DIAGNOSTICS))
def test_six_queries_with_one_answer_are_quiet(make_env: Make, diagnostics: str) -> None:
    rig = make_env(diagnostics=diagnostics)
    plugin = SearchPlugin(lambda query, n: "Central European Time (UTC+1)")
    assert "Central European Time" in run_agent(ScriptedModel(wide), plugin)
    assert len(plugin.queries) == 6
    rig.assert_quiet()
    rig.assert_nothing_lost()


def test_the_same_search_with_new_results_is_quiet(make_env: Make) -> None:
    """Polling: the same query, a new page each time, then an answer."""
    rig = make_env()
    plugin = SearchPlugin(lambda query, n: f"page {n}: {'ab' * n}")
    model = ScriptedModel(lambda messages: "done" if tool_results(messages) >= 10 else stuck(messages))
    assert run_agent(model, plugin) == "done"
    assert len(plugin.queries) == 10
    rig.assert_quiet()


def test_model_calls_count_against_the_budget_with_diagnostics_on(make_env: Make) -> None:
    """``max_model_calls=3``: Semantic Kernel's ``chat <model>`` span is a model call by its name at start, so the
    fourth request is vetoed before it is sent (diagnostics on: off, Semantic Kernel makes no model-call span)."""
    make_env(diagnostics="on", max_model_calls=3)
    model, plugin = ScriptedModel(lambda messages: [(TOOL, {"query": f"q{tool_results(messages)}"})]), SearchPlugin()
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_agent(model, plugin)
    assert raised.value.detector == "call_budget" and model.calls == 3


def test_tool_calls_count_against_the_budget_with_diagnostics_off(make_env: Make) -> None:
    make_env(max_tool_calls=3)
    model, plugin = ScriptedModel(lambda messages: [(TOOL, {"query": f"q{tool_results(messages)}"})]), SearchPlugin()
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_agent(model, plugin)
    assert raised.value.detector == "call_budget" and len(plugin.queries) == 3


@pytest.mark.parametrize(("diagnostics", "searches", "requests"), [("sensitive", 5, 5), ("on", ATTEMPTS, ATTEMPTS + 1),
                                                                   ("off", ATTEMPTS, ATTEMPTS + 1)])
def test_stock_semantic_kernel(make_env: Make, diagnostics: str, searches: int, requests: int) -> None:
    """The gap the adapter closes (conformance, semantic-kernel 1.45): stock, a call's arguments reach its span just
    after it starts, and only with sensitive diagnostics: then the fifth search ran and the sixth model call was
    vetoed; otherwise the loop ran every attempt (and the agent answered with nothing)."""
    rig = make_env(adapter=False, diagnostics=diagnostics)
    model, plugin = ScriptedModel(stuck), SearchPlugin()
    if diagnostics == "sensitive":
        with pytest.raises(spanbreaker.Tripped) as raised:
            run_agent(model, plugin)
        assert raised.value.detector == "tool_repeat"
        assert [s.name for s in rig.blocked()] == ["chat gpt-4o-mini"]
    else:
        run_agent(model, plugin)
        rig.assert_quiet()
    assert (len(plugin.queries), model.calls) == (searches, requests)
    tool_starts = [keys for name, kind, keys in rig.ledger.started.values() if kind is Kind.TOOL]
    assert tool_starts and not any("gen_ai.tool.call.arguments" in keys for keys in tool_starts)


def test_uninstrument_puts_semantic_kernel_back() -> None:
    from semantic_kernel.filters.kernel_filters_extension import KernelFilterExtension
    from semantic_kernel.functions.kernel_function import KernelFunction

    from spanbreaker.adapters.semantic_kernel import ADAPTER

    stock = vars(KernelFunction)["invoke"], vars(KernelFilterExtension)["construct_call_stack"]
    ADAPTER.instrument(None, None)
    assert vars(KernelFunction)["invoke"] is not stock[0]
    ADAPTER.uninstrument()
    assert (vars(KernelFunction)["invoke"], vars(KernelFilterExtension)["construct_call_stack"]) == stock


def test_a_steer_reaches_the_model_as_the_calls_result(make_env: Make) -> None:
    """``response="steer"``: the fifth identical search is failed with the steer, which Semantic Kernel hands the model
    as the call's result ("An error occurred while invoking the function ..."); the same call once more trips."""
    rig = make_env(response="steer")
    results: list[str] = []

    def script(messages: list[dict[str, Any]]) -> Any:
        results.extend(str(m.get("content")) for m in messages[-1:] if m.get("role") == "tool")
        return stuck(messages)

    model, plugin = ScriptedModel(script), SearchPlugin()
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_agent(model, plugin)
    assert raised.value.detector == "tool_repeat" and len(plugin.queries) == 4 and model.calls == 6
    assert "change course" in results[-1] and "spanbreaker" in results[-1]
    assert rig.processor.stats.steered == 1
    rig.assert_nothing_lost()
