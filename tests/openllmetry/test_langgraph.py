"""A LangGraph ReAct agent traced by OpenLLMetry's LangChain instrumentor (Traceloop's
``opentelemetry-instrumentation-langchain``): its spans start bare; its ``execute_tool <name>`` spans then carry the
callback's whole record, every call's text made distinct by graph steps, checkpoints and per-call ids. With the adapter
(``spanbreaker.adapters.openllmetry_langchain``, what ``spanbreaker.instrument()`` turns on) model and tool spans say
what they are at start and each tool call is shown to the breaker as it starts and ends: the 5th identical call is
vetoed before it runs, content tracing on or off. Without it (a breaker added by hand) the records are still read
(``conventions/openllmetry.py``): the call is decided as it ends and the next one is vetoed. Healthy look-alikes stay
quiet. The model is the only stub (a scripted LangChain chat model)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from opentelemetry.instrumentation.langchain import LangchainInstrumentor

import spanbreaker
from spanbreaker.adapters.openllmetry_langchain import ADAPTER
from spanbreaker.signals import Kind

from ..genai_rig import WIDE, Rig, instrumentor_rigs, make_rig, put_back
from .conftest import LANGCHAIN_AS_DEFINED

RECURSION_LIMIT = 60
Script = Callable[[int, list[Any]], str | None]
"""(the model's turn, the messages so far) -> the query to search for, or None to answer."""


class ScriptedChatModel(BaseChatModel):
    script: Any
    turns: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.turns += 1
        query = self.script(self.turns, messages)
        usage = {"input_tokens": 900, "output_tokens": 30, "total_tokens": 930}
        if query is None:
            message = AIMessage("done", usage_metadata=usage)
        else:
            message = AIMessage("", usage_metadata=usage, tool_calls=[
                {"name": "web_search", "args": {"query": query}, "id": f"call_{self.turns}", "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture(params=["content on", "content off"])
def rig(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    """The breaker with the adapter and the instrumentor on, content tracing on or off."""
    monkeypatch.setenv("TRACELOOP_TRACE_CONTENT", "true" if request.param == "content on" else "false")
    with instrumentor_rigs(ADAPTER, LangchainInstrumentor, LANGCHAIN_AS_DEFINED) as make:
        yield make()


@pytest.fixture
def by_hand(monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    """The breaker added to the provider by hand (no adapter), beside the instrumentor, content tracing on."""
    monkeypatch.setenv("TRACELOOP_TRACE_CONTENT", "true")
    made = make_rig()
    LangchainInstrumentor().instrument(tracer_provider=made.provider)
    yield made
    LangchainInstrumentor().uninstrument()
    put_back(LANGCHAIN_AS_DEFINED)
    made.provider.shutdown()


def run_agent(rig: Rig, script: Script, page: Callable[[str, int], str]) -> tuple[ScriptedChatModel, list[str]]:
    from langgraph.prebuilt import create_react_agent

    searches: list[str] = []

    @tool
    def web_search(query: str) -> str:
        """Search the web."""
        searches.append(query)
        return page(query, len(searches))

    model = ScriptedChatModel(script=script)
    with warnings.catch_warnings():  # create_react_agent is deprecated in LangGraph 1.x, and still shipped
        warnings.simplefilter("ignore")
        agent = create_react_agent(model, [web_search])
    agent.invoke({"messages": [("user", "How do I set up a Postgres checkpointer?")]},
                 {"recursion_limit": RECURSION_LIMIT})
    return model, searches


def same_page(_query: str, _n: int) -> str:
    return "1. Persistence - docs.langchain.com/langgraph/persistence: use PostgresSaver.from_conn_string(...)"


def stuck(_turn: int, _messages: list[Any]) -> str:
    return "langgraph checkpoint postgres setup"


def test_a_search_loop_is_stopped_before_the_fifth_identical_call_runs(rig: Rig) -> None:
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_agent(rig, stuck, same_page)
    assert raised.value.detector == "tool_repeat"
    tools = [s for s in rig.spans() if s.name == "execute_tool web_search"]
    assert len(tools) == 5 and len(rig.blocked()) == 1 and rig.blocked()[0] is tools[-1], "4 ran, the 5th vetoed"
    assert len(rig.ran(Kind.LLM)) == 5, "the model calls count as model calls, from their start"
    rig.assert_nothing_lost()


def test_model_calls_count_against_the_budget_from_their_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACELOOP_TRACE_CONTENT", "true")
    with instrumentor_rigs(ADAPTER, LangchainInstrumentor, LANGCHAIN_AS_DEFINED) as make:
        rig = make(max_model_calls=3)
        with pytest.raises(spanbreaker.Tripped) as raised:
            run_agent(rig, stuck, same_page)
    assert raised.value.detector == "call_budget"
    assert len(rig.ran(Kind.LLM)) == 3 and len(rig.blocked()) == 1


def test_without_the_adapter_the_records_stop_the_loop_as_each_call_ends(by_hand: Rig) -> None:
    with pytest.raises(spanbreaker.Tripped) as raised:
        run_agent(by_hand, stuck, same_page)
    assert raised.value.detector == "tool_repeat" and raised.value.evidence["identical_calls"] == 5
    tools = [s for s in by_hand.spans() if s.name == "execute_tool web_search"]
    assert len(tools) == 6 and by_hand.blocked() == [tools[-1]], "5 ran; decided as the 5th ended, the 6th vetoed"


def test_wide_research_with_one_answer_is_quiet(rig: Rig) -> None:
    _, searches = run_agent(rig, lambda turn, _messages: WIDE[turn - 1] if turn <= len(WIDE) else None,
                                same_page)
    assert searches == WIDE
    rig.assert_quiet()


def test_the_same_search_with_new_results_is_quiet(rig: Rig) -> None:
    """A feed read until the agent has enough: the same call, a new page each time."""
    def script(turn: int, messages: list[Any]) -> str | None:
        return "acme news" if sum(isinstance(m, ToolMessage) for m in messages) < 12 else None

    _, searches = run_agent(rig, script, lambda _q, n: f"Acme news, page of the hour {n}: " + "headline " * n)
    assert len(searches) == 12
    rig.assert_quiet()


def test_without_the_adapter_and_content_off_calls_are_unknown_never_identical(
        by_hand: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """``TRACELOOP_TRACE_CONTENT=false`` and no adapter: no record on the spans, so no call is read; nothing is taken
    for a repeat (the run goes to LangGraph's own limit: the prebuilt agent answers that it needs more steps)."""
    monkeypatch.setenv("TRACELOOP_TRACE_CONTENT", "false")
    _, searches = run_agent(by_hand, stuck, same_page)
    assert len(searches) == (RECURSION_LIMIT - 1) // 2
    by_hand.assert_quiet()
