"""LangGraph under OpenInference's ``hide_inputs`` / ``hide_outputs``: the instrumentor writes ``__REDACTED__`` for
every tool call's arguments and result, and sets them (and the span's kind) only when the run ends. The breaker is
shown the values in process (``adapters/openinference.py``): the loop is stopped as without the setting, wide
research stays quiet, and no exported span carries a hidden value.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from openinference.instrumentation.config import REDACTED_VALUE

import spanbreaker

from .conftest import LangGraphEnv, run
from .scripted import AGENTS, WIDE_QUERIES, build
from .test_agents import LOOP_DETECTOR, LOOP_TOOL_CALLS


@pytest.fixture
def hidden_env(monkeypatch: pytest.MonkeyPatch, make_env: Callable[..., LangGraphEnv]) -> LangGraphEnv:
    monkeypatch.setenv("OPENINFERENCE_HIDE_INPUTS", "true")
    monkeypatch.setenv("OPENINFERENCE_HIDE_OUTPUTS", "true")
    return make_env()  # the instrumentor's TraceConfig reads the variables when it is instrumented


def _tools(env: LangGraphEnv) -> list[dict[str, object]]:
    return [dict(s.attributes or {}) for s in env.spans()
            if (s.attributes or {}).get("openinference.span.kind") == "TOOL"]


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_hidden_loop_is_stopped(hidden_env: LangGraphEnv, agent: str) -> None:
    graph, calls = build(agent, "loop")
    with pytest.raises(spanbreaker.Tripped) as caught:
        run(graph, "sync")
    assert caught.value.detector == LOOP_DETECTOR
    assert calls.tools == LOOP_TOOL_CALLS
    tools = _tools(hidden_env)
    assert tools and all(a.get("input.value") == REDACTED_VALUE for a in tools)
    assert all(a.get("output.value") in (REDACTED_VALUE, None) for a in tools)
    hidden_env.assert_nothing_lost()


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_hidden_wide_research_stays_quiet(hidden_env: LangGraphEnv, agent: str) -> None:
    graph, calls = build(agent, "wide")
    run(graph, "sync")
    assert calls.queries == list(WIDE_QUERIES)
    assert hidden_env.processor.stats.trips == 0
    tools = _tools(hidden_env)
    assert len(tools) == len(WIDE_QUERIES) and all(a.get("input.value") == REDACTED_VALUE for a in tools)
    hidden_env.assert_nothing_lost()
