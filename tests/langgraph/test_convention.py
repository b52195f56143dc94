"""The LangChain convention's readers on the shapes the instrumentor records (see conventions/langchain.py)."""

from __future__ import annotations

import json

from spanbreaker.conventions import langchain as lc


def _envelope(content: object, call_id: str) -> str:
    return json.dumps({"type": "tool", "data": {"content": content, "additional_kwargs": {}, "type": "tool",
                                                "name": "search", "id": None, "tool_call_id": call_id,
                                                "artifact": None, "status": "success"}})


def test_tool_message_envelope_is_unwrapped_to_its_content() -> None:
    assert _envelope("x", "call_1").startswith(lc.TOOL_MESSAGE)
    assert lc.tool_result(_envelope("Paris: sunny", "call_1"), 65_536) == "Paris: sunny"
    listed = [{"type": "text", "text": "a"}]
    assert lc.tool_result(_envelope(listed, "call_1"), 65_536) == lc.tool_result(_envelope(listed, "call_2"), 65_536)


def test_an_envelope_too_long_to_parse_loses_its_per_call_ids() -> None:
    body = "row " * 100
    first, second = lc.tool_result(_envelope(body, "call_1"), 64), lc.tool_result(_envelope(body, "call_22"), 64)
    assert first == second and "call_" not in first and body in first


def test_what_is_not_an_envelope_is_left_as_it_is() -> None:
    broken = lc.TOOL_MESSAGE + '"content": '
    assert lc.tool_result(broken, 65_536) == broken
    assert lc.tool_result('{"type": "tool", "data": {"no_content": 1}}', 65_536).startswith(lc.TOOL_MESSAGE)


def test_start_attributes_follow_the_instrumentors_kind_rule() -> None:
    tool = lc.start_attributes("tool", "search", {"query": "weather in Paris"}, {"name": "search"})
    assert tool == {"openinference.span.kind": "TOOL", "tool.name": "search", "input.value": "weather in Paris"}
    two = lc.start_attributes("tool", "book", {"city": "Rome", "nights": 2})
    assert json.loads(two["input.value"]) == {"city": "Rome", "nights": 2} and two["tool.name"] == "book"
    assert lc.start_attributes("chain", "agent", {"messages": []})["openinference.span.kind"] == "AGENT"
    assert lc.start_attributes("chain", "LangGraph", {"messages": ["hi"]}) == {"openinference.span.kind": "CHAIN"}
    assert lc.start_attributes("parser", "out", None) == {"openinference.span.kind": "CHAIN"}
    assert lc.start_attributes(None, None, object()) == {"openinference.span.kind": "CHAIN"}
    assert lc.start_attributes("llm", "Model", {"messages": [[object()]]})["openinference.span.kind"] == "LLM"
