"""The agent of the decorator tiers (``tests/traceloop_decorators``, ``tests/langfuse_observe``): a loop around the
OpenAI client whose tool is a function the tracing SDK's decorator wraps, written once. Each tier's app decorates the
tool and the agent with its own SDK; the scripted model asks for the same search every turn (``stuck``) or for five
different ones and then answers (``healthy``)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

QUERIES = ["acme guidance", "acme revenue", "acme ceo", "acme plants", "acme debt"]
TURNS = 30
TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}}}}]


def script_for(name: str) -> Any:
    from _scripted_openai import tool_results

    if name == "stuck":
        return lambda messages: [("search", {"query": "same"})]
    return lambda messages: ("Acme's answer." if tool_results(messages) >= len(QUERIES)
                             else [("search", {"query": QUERIES[tool_results(messages)]})])


def research(client: Any, search: Callable[..., str], question: str) -> str:
    """The agent's loop: ask the model, run the searches it asks for, until it answers (at most :data:`TURNS`)."""
    messages: list[Any] = [{"role": "user", "content": question}]
    for _ in range(TURNS):
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS).choices[0].message
        if not reply.tool_calls:
            return str(reply.content)
        messages.append(reply.model_dump(exclude_none=True))
        for call in reply.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": search(**json.loads(call.function.arguments))})
    return "gave up"


async def aresearch(client: Any, search: Callable[..., Awaitable[str]], question: str) -> str:
    """:func:`research` with the async client and an async tool."""
    messages: list[Any] = [{"role": "user", "content": question}]
    for _ in range(TURNS):
        reply = (await client.chat.completions.create(model="gpt-4o-mini", messages=messages,
                                                      tools=TOOLS)).choices[0].message
        if not reply.tool_calls:
            return str(reply.content)
        messages.append(reply.model_dump(exclude_none=True))
        for call in reply.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": await search(**json.loads(call.function.arguments))})
    return "gave up"


def assert_nothing_lost(summary: dict[str, Any]) -> None:
    """What an app's summary must say after any run: every span exported once, each run's agent span among them, no
    span left attached to the thread's context."""
    assert summary["unique"], "every span exported once"
    assert summary["agents"] == len(summary["runs"]), "each run's agent span was exported"
    assert not summary["current"], "no span left attached to the thread's context"


def spans_summary(spans: Any, agent_span: str, tool_span: str, input_key: str) -> dict[str, Any]:
    """What the exporter received, for an app's summary: the agent's spans (by name) and whether the trip reached
    them, traces, duplicates, the spans blocked and tripped, how many tool spans carry a recorded input; and whether a
    span is still attached to this thread's context."""
    from opentelemetry import trace

    agents = [span for span in spans if span.name == agent_span]
    return {"spans": len(spans), "agents": len(agents),
            "agents_tripped": sum(1 for span in agents if (span.attributes or {}).get("spanbreaker.tripped")),
            "traces": len({span.context.trace_id for span in spans}),
            "unique": len({span.context.span_id for span in spans}) == len(spans),
            "current": trace.get_current_span().get_span_context().is_valid,
            "blocked": [span.name for span in spans if (span.attributes or {}).get("spanbreaker.blocked")],
            "tripped": sum(1 for span in spans if (span.attributes or {}).get("spanbreaker.tripped")),
            "inputs": sum(1 for span in spans if span.name == tool_span and (span.attributes or {}).get(input_key))}
