"""An OpenAI Agents SDK triage agent hands off to a support agent that polls the same order forever; spanbreaker
stops it. Offline: the model is scripted.

The support agent keeps calling ``order_status("A-1042")`` and keeps reading "pending, no carrier assigned".
``max_turns`` alone would let it make 40 model calls. The instrumentor records a tool call's arguments only when
the call ends; spanbreaker's adapter shows the breaker each call as it starts, so ``tool_repeat`` vetoes the fifth
identical call before it runs: ``Tripped`` comes out of ``Runner.run_sync``.

    python examples/openai_agents_handoff_loop.py
"""

from __future__ import annotations

from _report import print_trip
from _scripted_openai_agents import ScriptedModel
from agents import Agent, Runner, function_tool
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker

MAX_TURNS = 40
calls = {"order_status": 0}


@function_tool
def order_status(order_id: str) -> str:
    """Look an order up."""
    calls["order_status"] += 1
    return f"order {order_id}: pending, no carrier assigned"


def main() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spanbreaker.instrument(tracer_provider=provider, frameworks=["openai_agents"])

    support_model = ScriptedModel(lambda n, items: [("order_status", {"order_id": "A-1042"})])
    support = Agent(name="Support", instructions="Track orders.", tools=[order_status], model=support_model)
    triage_model = ScriptedModel(lambda n, items: [("transfer_to_support", {})])
    triage = Agent(name="Triage", instructions="Route the customer.", handoffs=[support], model=triage_model)
    print(f"Asking a triage agent where order A-1042 is (max_turns={MAX_TURNS}) ...")
    try:
        Runner.run_sync(triage, "Where is my order A-1042?", max_turns=MAX_TURNS)
        print("The agent finished without being stopped.")
        return
    except spanbreaker.Tripped as trip:
        print_trip(trip, exporter, f"model calls made: {triage_model.calls + support_model.calls}, order_status ran "
                   f"{calls['order_status']} times (max_turns alone would allow {MAX_TURNS} model calls)")


if __name__ == "__main__":
    main()
