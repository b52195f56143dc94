"""Langfuse's observations as exported (``conventions/langfuse.py``; the real SDK is driven in its own tier,
``tests/langfuse_observe``): their type says what they are, a tool's input and output are its call and result, and a
generation's usage record its tokens."""

from __future__ import annotations

import json

from spanbreaker.conventions import classify
from spanbreaker.conventions.read import fill_model_result, fill_tool_result, tool_start
from spanbreaker.kinds import Kind
from spanbreaker.signals import ModelCall

CAP = 4096


def test_the_observation_type_says_what_the_span_is() -> None:
    assert classify("search", {"langfuse.observation.type": "tool"}) is Kind.TOOL
    assert classify("researcher", {"langfuse.observation.type": "agent"}) is Kind.AGENT
    assert classify("OpenAI-generation", {"langfuse.observation.type": "generation"}) is Kind.LLM
    for other in ("span", "chain", "retriever", "embedding", "evaluator", "guardrail", "event", ["tool"], 3):
        assert classify("x", {"langfuse.observation.type": other}) is Kind.OTHER


def test_a_tool_observations_input_and_output_are_its_call_and_result() -> None:
    attributes = {"langfuse.observation.type": "tool", "langfuse.observation.input": json.dumps(
        {"args": ["same"], "kwargs": {}}), "langfuse.observation.output": "page about same"}
    call = tool_start("search", attributes, frozenset(), CAP)
    assert (call.name, call.args_known, call.raw_args) == ("search", True, '{"args": ["same"], "kwargs": {}}')
    fill_tool_result(call, attributes, None, CAP, frozenset())
    assert call.result_known and call.result_sample == "page about same"


def test_a_generations_usage_record_is_its_token_count() -> None:
    call = ModelCall(None)
    fill_model_result(call, {"langfuse.observation.type": "generation", "langfuse.observation.model.name": "gpt-4o",
                             "langfuse.observation.usage_details": '{"input": 120, "output": 20, "total": 140}'}, CAP)
    assert (call.model, call.prompt_tokens, call.completion_tokens, call.tokens) == ("gpt-4o", 120, 20, 140)
    for odd in ("not json", "[1, 2]", '{"input": -1, "output": "x"}', "x" * 10_000, 7):
        call = ModelCall(None)
        fill_model_result(call, {"langfuse.observation.usage_details": odd}, CAP)
        assert call.tokens == 0, odd
