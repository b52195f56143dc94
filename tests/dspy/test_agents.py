"""A looping ``dspy.ReAct`` is stopped, a healthy one is not: real DSPy, the real OpenInference DSPy instrumentor
through spanbreaker's adapter, a real SDK provider; the model (served on loopback) is the only stand-in."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

import spanbreaker
from spanbreaker.signals import Kind

from ..genai_rig import Rig
from .scripted import MAX_ITERS, STEPS, agent


def test_a_react_loop_is_stopped_before_its_fifth_identical_search(rig: Rig) -> None:
    with agent("loop") as looping, pytest.raises(spanbreaker.Tripped) as raised:
        looping()
    trip = raised.value
    assert trip.detector == "tool_repeat" and trip.evidence["tool"] == "search"
    assert len(looping.searches) == 4, "the fifth identical search was vetoed before it ran"
    assert looping.model.calls == 5  # against ReAct's own limit of 30 steps
    blocked = rig.blocked()
    assert [s.name for s in blocked] == ["search.__call__"]
    assert blocked[0].attributes["tool.name"] == "search"  # type: ignore[index]
    roots = [s for s in rig.spans() if s.parent is None]
    assert [s.name for s in roots] == ["ReAct.forward"] and roots[0].attributes["spanbreaker.tripped"] is True  # type: ignore[index]
    rig.assert_nothing_lost()


def test_an_async_react_loop_is_stopped_the_same_way(rig: Rig) -> None:
    with agent("loop") as looping, pytest.raises(spanbreaker.Tripped) as raised:
        looping.run_async()
    assert raised.value.detector == "tool_repeat" and raised.value.evidence["tool"] == "search"
    assert len(looping.searches) == 4 and looping.model.calls == 5
    assert [s.name for s in rig.blocked()] == ["search.acall"]
    rig.assert_nothing_lost()


@pytest.mark.parametrize("script", ["fresh", "wide"], ids=["same-call-new-results", "different-queries"])
def test_a_healthy_react_run_finishes_quiet(rig: Rig, script: str) -> None:
    with agent(script) as healthy:
        prediction = healthy()
    assert prediction.answer == "Guidance will be published in March."
    assert len(healthy.searches) == STEPS
    assert healthy.model.calls == STEPS + 2  # a step per search, the finish step, the extraction
    rig.assert_quiet()
    rig.assert_nothing_lost()


def test_the_model_call_budget_vetoes_the_fourth_call_before_it_is_sent(make_dspy_rig: Callable[..., Rig]) -> None:
    rig = make_dspy_rig(max_model_calls=3)
    with agent("wide") as busy, pytest.raises(spanbreaker.Tripped) as raised:
        busy()
    assert raised.value.detector == "call_budget"
    assert busy.model.calls == 3, "the fourth request never reached the model"
    assert [s.name for s in rig.blocked()] == ["LM.__call__"]
    rig.assert_nothing_lost()


def test_model_spans_end_with_the_usage_dspy_recorded(rig: Rig) -> None:
    """The stock LM span ends with the completion texts only; the adapter adds DSPy's own usage figures, so the
    token budget counts DSPy model calls (the scripted server reports 120 x n prompt tokens, 20 completion)."""
    with agent("wide") as healthy:
        healthy()
    llm = rig.of_kind(Kind.LLM)
    assert [s.name for s in llm] == ["LM.__call__"] * (STEPS + 2)
    prompts = [s.attributes.get("llm.token_count.prompt") for s in llm]  # type: ignore[union-attr]
    assert prompts == [120 * n for n in range(1, STEPS + 3)]
    assert {s.attributes.get("llm.token_count.total") - s.attributes.get("llm.token_count.prompt")  # type: ignore[operator, union-attr]
            for s in llm} == {20}


def test_the_token_budget_stops_a_dspy_run(make_dspy_rig: Callable[..., Rig]) -> None:
    rig = make_dspy_rig(max_tokens=500)  # 140 + 260 after two calls, 780 after the third
    with agent("wide") as busy, pytest.raises(spanbreaker.Tripped) as raised:
        busy()
    assert raised.value.detector == "token_budget"
    assert busy.model.calls == 3
    rig.assert_nothing_lost()


def test_per_tool_policies_apply_by_the_tools_own_name(make_dspy_rig: Callable[..., Rig]) -> None:
    """The stock span is named ``search.__call__`` (``search.acall`` when async); the adapter starts it with
    ``tool.name`` = ``search``, so ``allowlist={"search"}`` exempts it from the repeat check."""
    make_dspy_rig(allowlist=frozenset({"search"}))
    with agent("loop", max_iters=8) as polling:
        polling()
    assert len(polling.searches) == 8


def test_through_litellm_each_model_call_counts_once(make_dspy_rig: Callable[..., Rig]) -> None:
    """``engine="litellm"`` with LiteLLM's instrumentor on too (as the launcher turns on every one installed): the
    LiteLLM span inside each DSPy LM span is the same call, counted once against the budget."""
    from spanbreaker.adapters.litellm import ADAPTER as LITELLM

    rig = make_dspy_rig(max_model_calls=3)
    LITELLM.instrument(rig.provider, rig.processor)
    try:
        with agent("wide", engine="litellm") as busy, pytest.raises(spanbreaker.Tripped) as raised:
            busy()
    finally:
        LITELLM.uninstrument()
    assert raised.value.detector == "call_budget" and busy.model.calls == 3
    names = [s.name for s in rig.spans() if (s.attributes or {}).get("openinference.span.kind") == "LLM"]
    assert names.count("completion") == 3 and names.count("LM.__call__") == 4
    rig.assert_nothing_lost()


def test_through_litellm_a_loop_is_stopped_the_same_way(make_dspy_rig: Callable[..., Rig]) -> None:
    from spanbreaker.adapters.litellm import ADAPTER as LITELLM

    rig = make_dspy_rig()
    LITELLM.instrument(rig.provider, rig.processor)
    try:
        with agent("loop", engine="litellm") as looping, pytest.raises(spanbreaker.Tripped):
            looping()
    finally:
        LITELLM.uninstrument()
    assert len(looping.searches) == 4 and looping.model.calls == 5
    rig.assert_nothing_lost()


def test_the_tool_span_keeps_the_instrumentors_arguments(rig: Rig) -> None:
    with agent("wide") as healthy:
        healthy()
    tools = [s for s in rig.of_kind(Kind.TOOL) if s.name == "search.__call__"]
    assert json.loads(tools[0].attributes["input.value"]) == {"kwargs": {"query": "acme guidance source 0"}}  # type: ignore[index]
    assert tools[0].attributes["output.value"] == json.dumps(  # type: ignore[index]
        "Acme Corp investor relations: guidance for 2026 will be published in March.")
    assert MAX_ITERS > STEPS


def test_uninstrument_puts_dspy_back() -> None:
    import dspy
    from openinference.instrumentation.dspy import DSPyInstrumentor, _ToolCallWrapper

    from spanbreaker.adapters.dspy import ADAPTER
    from spanbreaker.instrumentation import attach

    from ..genai_rig import make_rig

    original_call, original_wrapper = dspy.Tool.__call__, vars(_ToolCallWrapper)["__call__"]
    rig = make_rig()
    ADAPTER.instrument(rig.provider, rig.processor)
    assert dspy.Tool.__call__ is not original_call and vars(_ToolCallWrapper)["__call__"] is not original_wrapper
    ADAPTER.uninstrument()
    assert vars(_ToolCallWrapper)["__call__"] is original_wrapper
    assert not DSPyInstrumentor().is_instrumented_by_opentelemetry
    assert attach(rig.provider) is rig.processor
    rig.provider.shutdown()


def test_steer_fails_the_first_repeat_into_reacts_observation_then_stops(make_dspy_rig: Callable[..., Rig]) -> None:
    """``response="steer"``: the vetoed search fails with ``Steered`` (an ``Exception``), which ReAct writes into the
    trajectory as the observation, so the model reads why; the next identical search stops the run."""
    make_dspy_rig(response="steer")
    with agent("loop") as looping, pytest.raises(spanbreaker.Tripped) as raised:
        looping()
    assert raised.value.detector == "tool_repeat"
    assert len(looping.searches) == 4 and looping.model.calls == 6
    trajectory = looping.model.requests[-1]["messages"][-1]["content"]
    observation = trajectory[trajectory.index("[[ ## observation_4 ## ]]"):]
    assert "Execution error in search" in observation and "This call was not run" in observation
