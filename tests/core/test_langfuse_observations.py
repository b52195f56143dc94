"""Langfuse's observations as exported (``conventions/langfuse.py``; the real SDK is driven in its own tier,
``tests/langfuse_observe``): their type says what they are, a tool's input and output are its call and result, and a
generation's usage record its tokens."""

from __future__ import annotations

import json

from spanbreaker.conventions import classify, prompt_calls
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


def test_openais_cached_tokens_in_a_usage_record_are_the_prompts_cached_part() -> None:
    call = ModelCall(None)
    usage = {"prompt_tokens": 10_000, "completion_tokens": 20, "total_tokens": 10_020,
             "prompt_tokens_details": {"cached_tokens": 8_000}}
    fill_model_result(call, {"langfuse.observation.type": "generation",
                             "langfuse.observation.usage_details": json.dumps(usage)}, CAP)
    assert (call.prompt_tokens, call.cache_read_tokens, call.tokens) == (10_000, 8_000, 10_020)


def test_a_generations_input_is_the_prompt_a_client_loop_is_read_from() -> None:
    """Langfuse's OpenAI integration records the request body as the generation's input: the prompt whose last turn
    shows the model's previous tool calls and their results (a loop with no tool observation of its own)."""
    messages = [{"role": "user", "content": "find"},
                {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                                                      "function": {"name": "search", "arguments": '{"q": "acme"}'}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "same page"}]
    request = json.dumps({"tools": [], "messages": messages})
    prompt = prompt_calls.prompt_of({"langfuse.observation.type": "generation", "langfuse.observation.input": request})
    assert prompt == request
    turn = prompt_calls.last_turn(prompt)
    assert turn is not None and [(c.name, c.result) for c in turn[1]] == [("search", "same page")]
    # another observation type's input is no prompt (a tool's call record, a span's)
    assert prompt_calls.prompt_of({"langfuse.observation.type": "span", "langfuse.observation.input": request}) is None
