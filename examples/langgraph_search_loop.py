"""A LangGraph ReAct agent stuck re-running one search, stopped by spanbreaker. Offline: the model is scripted.

The model keeps asking for the same search and the tool keeps returning the same page. LangGraph's own guard,
the recursion limit, would let it run ``(RECURSION_LIMIT - 1) // 2`` tool calls (its default limit is 25; here
60); spanbreaker stops it after a handful, and ``spanbreaker.Tripped`` comes out of ``agent.invoke``.

    pip install 'spanbreaker[langgraph]'
    python examples/langgraph_search_loop.py
"""

from __future__ import annotations

import warnings
from typing import Any

from _report import print_trip_marks
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

RECURSION_LIMIT = 60
searches = 0


class StuckModel(BaseChatModel):
    """Stands in for the LLM: asks for the same search, forever."""

    turns: int = 0

    @property
    def _llm_type(self) -> str:
        return "stuck-model"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.turns += 1
        call = {"name": "web_search", "args": {"query": "langgraph checkpoint postgres setup"},
                "id": f"call_{self.turns}", "type": "tool_call"}
        usage = {"input_tokens": 900 + 40 * self.turns, "output_tokens": 30, "total_tokens": 930 + 40 * self.turns}
        return ChatResult(generations=[ChatGeneration(message=AIMessage("", tool_calls=[call],
                                                                        usage_metadata=usage))])


@tool
def web_search(query: str) -> str:
    """Search the web."""
    global searches
    searches += 1
    return "1. Persistence - docs.langchain.com/langgraph/persistence: use PostgresSaver.from_conn_string(...)"


def main() -> None:
    from langgraph.prebuilt import create_react_agent

    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spanbreaker.instrument(tracer_provider=provider, frameworks=("langchain",))  # breaker + LangChain spans

    model = StuckModel()
    with warnings.catch_warnings():  # create_react_agent is deprecated in LangGraph 1.x, and still shipped
        warnings.simplefilter("ignore")
        agent = create_react_agent(model, [web_search])
    print("Asking a LangGraph ReAct agent how to set up a Postgres checkpointer "
          f"(recursion_limit={RECURSION_LIMIT}) ...")
    try:
        agent.invoke({"messages": [("user", "How do I set up a Postgres checkpointer?")]},
                     {"recursion_limit": RECURSION_LIMIT})
        print("The agent finished without being stopped.")
        return
    except spanbreaker.Tripped as trip:
        print(f"\nspanbreaker tripped: [{trip.detector}] {trip.reason}")
        print(f"  searches run: {searches}, model calls: {model.turns} "
              f"(the recursion limit alone would allow {(RECURSION_LIMIT - 1) // 2} searches)")
        print(f"  evidence: {trip.evidence}")
        print(f"  trace: {trip.trace_id}")
    print_trip_marks(exporter)


if __name__ == "__main__":
    main()
