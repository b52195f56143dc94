"""Tool calls read from a model call's prompt (conventions/prompt_calls.py), in every shape it reads, and through
the engine on spans of a real SDK provider: the loop is stopped at the model call that would read the repeated
result, in a trace that records no tool span; nothing is read where tool spans exist; nothing malformed raises."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
from spanbreaker.conventions.prompt_calls import PromptCall, last_turn, last_turn_after, prompt_of, run_so_far


def chat(calls: list[tuple[str, str, dict[str, Any], str]], tail: list[dict[str, Any]] | None = None) -> str:
    """An OpenAI Chat Completions request ending with one assistant turn of ``(id, name, arguments, result)``."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You search."}, {"role": "user", "content": "go"}]
    messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}} for i, n, a, _ in calls]})
    messages += [{"role": "tool", "tool_call_id": i, "content": r} for i, _, _, r in calls]
    return json.dumps({"messages": messages + (tail or []), "model": "gpt-4o", "tools": [{"type": "function"}]})


def test_openai_chat_completions() -> None:
    found = last_turn(chat([("c1", "search", {"q": "a"}, "one"), ("c2", "open", {"url": "u"}, "two")]))
    assert found == (2, [PromptCall("c1", "search", '{"q": "a"}', "one"), PromptCall("c2", "open", '{"url": "u"}',
                                                                                      "two")])


def test_pydantic_logfires_first_format_records_the_request_body() -> None:
    """``instrument_openai(version=1)``: the request body as ``request_data``, no ``gen_ai.input.messages``; read only
    on Logfire's spans (the key is too plain a name to trust elsewhere)."""
    body = chat([("c1", "search", {"q": "a"}, "one")])
    assert prompt_of({"logfire.span_type": "span", "request_data": body}) == body
    assert prompt_of({"request_data": body}) is None
    assert prompt_of({"logfire.span_type": "span", "request_data": 3}) is None


def test_a_prompt_ending_with_a_new_user_request_answers_no_call() -> None:
    assert last_turn(chat([("c1", "search", {"q": "a"}, "one")], [{"role": "user", "content": "thanks"}])) is None
    assert last_turn(json.dumps({"messages": [{"role": "user", "content": "tool_call_id"}]})) is None


def test_a_call_not_answered_yet_is_left_out() -> None:
    text = json.dumps({"messages": [
        {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{}"}},
                                             {"id": "b", "function": {"name": "g", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "fine"}]}]})
    assert last_turn(text) == (0, [PromptCall("b", "g", "{}", "fine")])


def test_anthropic_messages_with_an_error_result() -> None:
    text = json.dumps({"model": "claude", "max_tokens": 100, "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "text", "text": "Let me look."},
                                          {"type": "tool_use", "id": "t1", "name": "read", "input": {"b": 1, "a": 2}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": True,
                                      "content": [{"type": "text", "text": "No such file"}]}]}]})
    assert last_turn(text) == (1, [PromptCall("t1", "read", '{"a": 2, "b": 1}', "No such file", "ToolError")])


def test_genai_messages_without_ids_pair_by_position() -> None:
    text = json.dumps([
        {"role": "user", "parts": [{"type": "text", "content": "weather?"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": None, "name": "weather", "arguments": {"c": "X"}},
                                        {"type": "tool_call", "id": None, "name": "weather", "arguments": {"c": "Y"}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": None, "response": "sunny"},
                                   {"type": "tool_call_response", "id": None, "response": {"t": 20}}]}])
    assert last_turn(text) == (1, [PromptCall("", "weather", '{"c": "X"}', "sunny"),
                                   PromptCall("", "weather", '{"c": "Y"}', '{"t": 20}')])


def test_pydantic_s_error_list_as_a_response_names_a_malformed_call() -> None:
    """pydantic-ai sends a failed validation back as the call's response: pydantic's error list. Any other list,
    or an empty one, is a result like any other."""
    errors = [{"type": "value_error", "loc": ["number"], "msg": "Value error, bad", "input": "2026-1"}]
    for response, label in ((errors, "OutputValidationError"), ([{"type": "x", "msg": "no loc"}], None), ([], None)):
        text = json.dumps([
            {"role": "user", "parts": [{"type": "text", "content": "extract"}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "final_result",
                                            "arguments": {"number": "2026-1"}}]},
            {"role": "user", "parts": [{"type": "tool_call_response", "id": "c1", "name": "final_result",
                                       "result": response}]}])
        turn = last_turn(text)
        assert turn is not None and turn[1][0].error == label


def test_instructor_s_re_ask_text_names_a_malformed_call_also_where_the_format_flagged_it() -> None:
    from spanbreaker.conventions import tool_text
    from spanbreaker.conventions.read import fill_tool_result
    from spanbreaker.signals import ToolCall

    reask = "Validation Error found:\n1 validation error for Person\nRecall the function correctly, fix the errors"
    assert tool_text.text_error(reask) == tool_text.text_error(reask.replace("Error", "Errors", 1))
    assert tool_text.text_error(reask) == "OutputValidationError"
    assert tool_text.text_error("Validation Error in the report: none") is None
    for flagged in (None, tool_text.FLAGGED):
        call = ToolCall("Person", 1, None)
        fill_tool_result(call, {"output.value": reask}, flagged, 4096, frozenset(), frozenset())
        assert call.error == "OutputValidationError"
    call = ToolCall("read", 1, None)
    fill_tool_result(call, {"output.value": "No such file"}, tool_text.FLAGGED, 4096, frozenset(), frozenset())
    assert call.error == tool_text.FLAGGED, "a flagged result whose text names nothing keeps the format's label"


JSON_REASK = ("Correct your JSON ONLY RESPONSE, based on the following errors:\n1 validation error for Person\nname\n"
              "  Value error, name must be upper case")


def test_a_structured_output_re_asked_in_a_user_message_is_a_failed_call_of_its_own() -> None:
    """Instructor's JSON modes: the model's answer, then a user message re-asking; every re-ask a turn of its own,
    and none of them a new request (the run so far goes back to the user's)."""
    from spanbreaker.conventions.prompt_calls import STRUCTURED_OUTPUT

    answer = '{"name": "jason", "age": 25}'
    messages = [{"role": "system", "content": "Return JSON."}, {"role": "user", "content": "Extract: jason is 25"},
                {"role": "assistant", "content": answer}, {"role": "user", "content": JSON_REASK},
                {"role": "assistant", "content": answer}, {"role": "user", "content": JSON_REASK}]
    prompt = json.dumps({"messages": messages, "model": "gpt-4o-mini"})
    failed = PromptCall("", STRUCTURED_OUTPUT, answer, JSON_REASK, "OutputValidationError")
    assert last_turn_after(prompt) == ((4, [failed]), False)
    assert run_so_far(prompt) == [(2, [failed]), (4, [failed])]
    quoted = "Validation Errors found:\nname\nRecall the function correctly, fix the errors found in the following " \
             "attempt:\n{...}"  # Anthropic's JSON mode: re-asks only, each quoting the attempt
    anthropic = json.dumps({"messages": [{"role": "user", "content": "Extract"},
                                         {"role": "user", "content": [{"type": "text", "text": quoted}]},
                                         {"role": "user", "content": quoted}]})
    assert run_so_far(anthropic) == [(1, [PromptCall("", STRUCTURED_OUTPUT, "", quoted, "OutputValidationError")]),
                                     (2, [PromptCall("", STRUCTURED_OUTPUT, "", quoted, "OutputValidationError")])]
    genai = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Extract"}]},
                        {"role": "assistant", "parts": [{"type": "text", "content": answer}]},
                        {"role": "user", "parts": [{"type": "text", "content": JSON_REASK}]}])
    found = last_turn(genai)
    assert found is not None and found[0] == 1 and found[1][0].result == JSON_REASK


def test_re_ask_text_in_a_tool_result_or_a_request_is_no_structured_output_re_ask() -> None:
    """A tool result that opens like a re-ask is the tool's (read as before); a user request that merely mentions
    one, or an answer of the model's, re-asks nothing."""
    anthropic = json.dumps({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Person", "input": {"name": "j"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": JSON_REASK,
                                      "is_error": True}]}]})
    found = last_turn(anthropic)
    assert found is not None and [call.name for call in found[1]] == ["Person"]
    for text in ("Please fix: " + JSON_REASK, "hello"):
        assert last_turn(json.dumps({"messages": [{"role": "assistant", "content": "{}"},
                                                  {"role": "user", "content": text}]})) is None
    assert last_turn(json.dumps({"messages": [{"role": "assistant", "content": JSON_REASK}]})) is None


def test_openai_responses_input_items() -> None:
    text = json.dumps({"model": "gpt-4o", "input": [
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": '{"x": 1}'},
        {"type": "function_call_output", "call_id": "a", "output": "r"}]})
    assert last_turn(text) == (1, [PromptCall("a", "f", '{"x": 1}', "r")])


def test_the_run_so_far_is_every_answered_turn_since_the_user_request() -> None:
    """Chat Completions: two turns after the request; the turn before the request (an earlier run) is not read."""
    turn = [{"role": "assistant", "tool_calls": [{"id": "c0", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c0", "content": "old"}]
    text = chat([("c1", "search", {"q": "a"}, "one")], [
        {"role": "assistant", "content": "and", "tool_calls": [
            {"id": "c2", "function": {"name": "open", "arguments": "{}"}},
            {"id": "c3", "function": {"name": "open", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "two"},
        {"role": "tool", "tool_call_id": "c3", "content": "3"}])
    earlier = json.dumps({"messages": [{"role": "user", "content": "first"}, *turn,
                                       *json.loads(text)["messages"][1:]]})
    expected = [(2, [PromptCall("c1", "search", '{"q": "a"}', "one")]),
                (4, [PromptCall("c2", "open", "{}", "two"), PromptCall("c3", "open", "{}", "3")])]
    assert run_so_far(text) == expected
    assert run_so_far(earlier) == [(position + 2, calls) for position, calls in expected]
    assert last_turn(text) == expected[-1]
    assert run_so_far(chat([("c1", "f", {}, "r")], [{"role": "user", "content": "thanks"}])) == []


def test_whether_the_last_turn_follows_a_user_request() -> None:
    """The first turn after a request opens a new run; a turn after another turn does not; the same reading gives
    the turn itself, as last_turn does. Flattened (already decoded) messages and a malformed one alike."""
    first = chat([("c1", "search", {"q": "a"}, "one")])
    assert last_turn_after(first) == (last_turn(first), True)
    second = chat([("c1", "search", {"q": "a"}, "one")], [
        {"role": "assistant", "tool_calls": [{"id": "c2", "function": {"name": "open", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "two"}])
    assert last_turn_after(second) == ((4, [PromptCall("c2", "open", "{}", "two")]), False)
    messages = json.loads(first)["messages"]
    assert last_turn_after(messages) == (last_turn(first), True)
    assert last_turn_after([*messages[:1], 7, *messages[2:]]) == (last_turn(first), False)
    assert last_turn_after(messages[2:]) == ((0, [PromptCall("c1", "search", '{"q": "a"}', "one")]), False)
    assert last_turn_after('{"messages": [') == (None, False)


def test_the_run_so_far_in_anthropic_responses_and_genai_shapes() -> None:
    """A user message of tool results is a turn's answers; a user message of text is a request and ends the run."""
    use = [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{n}", "name": "read", "input": {"n": n}}]}
           for n in range(3)]
    answer = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "x"}]}
              for n in range(3)]
    anthropic = json.dumps({"messages": [use[0], answer[0], {"role": "user", "content": "now this"},
                                         use[1], answer[1], use[2], answer[2]]})
    assert [(p, [c.call_id for c in calls]) for p, calls in run_so_far(anthropic)] == [(3, ["t1"]), (5, ["t2"])]
    responses = json.dumps({"input": [
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "1"},
        {"type": "function_call_output", "call_id": "b", "output": "2"},
        {"type": "message", "role": "assistant", "content": "reading"},
        {"type": "function_call", "call_id": "c", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "3"}]})
    assert [(p, [c.call_id for c in calls]) for p, calls in run_so_far(responses)] == [(6, ["c"])], (
        "the assistant's words between two turns end the run read: a turn is its calls, then their answers")
    genai = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "go"}]}] + [
        message for n in range(3) for message in (
            {"role": "assistant", "parts": [{"type": "tool_call", "id": f"g{n}", "name": "w", "arguments": {}}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"g{n}", "response": "r"}]})])
    assert [p for p, _ in run_so_far(genai)] == [1, 3, 5]


def test_gemini_contents_in_the_sdks_and_the_rest_apis_spelling() -> None:
    """``google-genai`` requests (snake_case, as OpenInference records them) and the REST API's camelCase; no ids:
    results pair with calls by position."""
    for call, response in (("function_call", "function_response"), ("functionCall", "functionResponse")):
        text = json.dumps({"model": "gemini-2.5-flash", "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [{call: {"name": "f", "args": {"b": 1, "a": 2}}},
                                        {call: {"name": "g", "args": {}}}]},
            {"role": "user", "parts": [{response: {"name": "f", "response": {"result": "one"}}},
                                       {response: {"name": "g", "response": {"result": "two"}}}]}]})
        assert last_turn(text) == (1, [PromptCall("", "f", '{"a": 2, "b": 1}', '{"result": "one"}'),
                                       PromptCall("", "g", "{}", '{"result": "two"}')])


def converse(turns: list[list[tuple[str, str, dict[str, Any], list[dict[str, Any]], str]]]) -> str:
    """What OpenInference's Bedrock instrumentor records as a Converse call's ``input.value``: the bare array of
    the request's ``messages``, each turn ``[(toolUseId, name, input, result content, status), ...]``."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "go"}]}]
    for turn in turns:
        messages.append({"role": "assistant", "content": [{"text": "Let me look."}] + [
            {"toolUse": {"toolUseId": i, "name": n, "input": a}} for i, n, a, _, _ in turn]})
        messages.append({"role": "user", "content": [
            {"toolResult": {"toolUseId": i, "content": c, "status": status}} for i, _, _, c, status in turn]})
    return json.dumps(messages)


def test_bedrock_converse_tool_use_and_tool_result_blocks() -> None:
    """Text and JSON result blocks read as one text (JSON with sorted keys); ``status: error`` is an error result."""
    text = converse([[("t1", "search", {"q": "a"}, [{"text": "page"}, {"json": {"b": 1, "a": [2]}}], "success"),
                      ("t2", "read", {"b": 1, "a": 2}, [{"text": "No such file"}], "error")]])
    assert last_turn(text) == (1, [PromptCall("t1", "search", '{"q": "a"}', 'page\n{"a": [2], "b": 1}'),
                                   PromptCall("t2", "read", '{"a": 2, "b": 1}', "No such file", "ToolError")])
    assert prompt_of({"input.value": text, "llm.input_messages.0.message.role": "user"}) == text


def test_bedrock_converse_run_so_far_and_a_new_request() -> None:
    """Every answered turn since the user's request; a user message of text is a request; an unanswered call, or a
    result of another call, is left out."""
    turns = [[(f"t{n}", "search", {"q": "a"}, [{"text": "same"}], "success")] for n in range(3)]
    text = converse(turns)
    assert [(p, [c.call_id for c in calls]) for p, calls in run_so_far(text)] == [(1, ["t0"]), (3, ["t1"]),
                                                                                   (5, ["t2"])]
    asked_again = [*json.loads(text), {"role": "assistant", "content": [{"text": "Done."}]},
                   {"role": "user", "content": [{"text": "and now?"}]}]
    assert last_turn(json.dumps(asked_again)) is None and run_so_far(json.dumps(asked_again)) == []
    stray = json.loads(converse([[("t1", "f", {}, [{"text": "r"}], "success")]]))
    stray[-1]["content"][0]["toolResult"]["toolUseId"] = "other"
    assert last_turn(json.dumps(stray)) is None


def test_malformed_bedrock_converse_blocks_read_as_nothing() -> None:
    for content in ([{"toolResult": "x"}], [{"toolResult": {"content": None}}], [{"toolResult": {"content": 7}}],
                    [{"toolResult": {"toolUseId": 3, "content": [None, 1, {"image": {}}]}}], ["toolResult"]):
        for use in ({"toolUse": None}, {"toolUse": {"input": None}}, {"toolUse": []}, {"toolUse": {"toolUseId": 3}}):
            text = json.dumps([{"role": "user", "content": [{"text": "go"}]},
                               {"role": "assistant", "content": [use]}, {"role": "user", "content": content}])
            found = last_turn(text)
            assert found is None or all(isinstance(call, PromptCall) for call in found[1])
            run_so_far(text)


def ollama(turns: list[list[tuple[str, dict[str, Any], str]]], spacing: tuple[str, str] = (", ", ": ")) -> str:
    """An Ollama ``/api/chat`` request (as OpenInference's Ollama instrumentor records it): per turn an assistant
    message of ``tool_calls`` without ids, then one ``tool`` message per call, in order."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for turn in turns:
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": n, "arguments": a}} for n, a, _ in turn]})
        messages += [{"role": "tool", "content": r, "tool_name": n} for n, _, r in turn]
    return json.dumps({"model": "llama3.1", "messages": messages}, separators=spacing)


def test_ollama_tool_calls_answered_in_order() -> None:
    """No call ids: the n-th ``tool`` message answers the n-th call; either JSON spacing is read."""
    for spacing in ((", ", ": "), (",", ":")):
        text = ollama([[("search", {"q": "a"}, "one"), ("open", {"url": "u"}, "two")]], spacing)
        assert last_turn(text) == (1, [PromptCall("", "search", '{"q": "a"}', "one"),
                                       PromptCall("", "open", '{"url": "u"}', "two")])
    text = ollama([[("search", {"q": "a"}, "same")] for _ in range(3)])
    assert [(p, [c.result for c in calls]) for p, calls in run_so_far(text)] == [
        (1, ["same"]), (3, ["same"]), (5, ["same"])]
    unanswered = json.loads(text)
    unanswered["messages"].append({"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "search", "arguments": {"q": "b"}}}]})
    assert last_turn(json.dumps(unanswered)) is None, "a turn whose calls are not answered yet implies nothing"


def flat(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """OpenInference's flattened input messages, as an instrumentor sets them on a span."""
    attributes: dict[str, Any] = {"openinference.span.kind": "LLM"}
    for i, message in enumerate(messages):
        for key, value in message.items():
            if key == "tool_calls":
                for j, call in enumerate(value):
                    for field, item in call.items():
                        attributes[f"llm.input_messages.{i}.message.tool_calls.{j}.tool_call.{field}"] = item
            elif key == "contents":
                for k, text in enumerate(value):
                    attributes[f"llm.input_messages.{i}.message.contents.{k}.message_content.type"] = "text"
                    attributes[f"llm.input_messages.{i}.message.contents.{k}.message_content.text"] = text
            else:
                attributes[f"llm.input_messages.{i}.message.{key}"] = value
    return attributes


def test_flattened_messages_are_read_where_no_request_text_is_on_the_span() -> None:
    """Google GenAI's instrumentor at start: no ``input.value``, the messages flattened (role ``model``, no ids);
    OpenAI-style flattened messages with ids and results as content parts read the same way."""
    call = {"function.name": "search", "function.arguments": '{"q": "a"}'}
    gemini = flat([{"role": "user", "content": "go"}, {"role": "model", "tool_calls": [call]},
                   {"role": "tool", "name": "search", "content": '{"result": "x"}'},
                   {"role": "model", "tool_calls": [call]},
                   {"role": "tool", "name": "search", "content": '{"result": "x"}'}])
    prompt = prompt_of(gemini)
    assert isinstance(prompt, list)
    assert run_so_far(prompt) == [(1, [PromptCall("", "search", '{"q": "a"}', '{"result": "x"}')]),
                                  (3, [PromptCall("", "search", '{"q": "a"}', '{"result": "x"}')])]
    with_ids = flat([{"role": "assistant", "tool_calls": [{**call, "id": "c1"}, {**call, "id": "c2"}]},
                     {"role": "tool", "tool_call_id": "c2", "contents": ["two", "lines"]},
                     {"role": "tool", "tool_call_id": "c1", "content": "one"}])
    assert last_turn(prompt_of(with_ids) or []) == (0, [PromptCall("c1", "search", '{"q": "a"}', "one"),
                                                        PromptCall("c2", "search", '{"q": "a"}', "two\nlines")])
    assert prompt_of(flat([{"role": "user", "content": "hi"}])) is None, "no tool result: nothing to read"
    assert prompt_of({**gemini, "input.value": "{}"}) == "{}", "the request text, where there is one, comes first"


def test_a_hidden_result_is_not_read_as_a_result() -> None:
    """OPENINFERENCE_HIDE_INPUT_TEXT writes ``__REDACTED__`` for every message's text: read as results, any two
    calls with the same arguments would look identical."""
    call = {"function.name": "search", "function.arguments": '{"q": "a"}'}
    hidden = flat([{"role": "model", "tool_calls": [call]}, {"role": "tool", "content": "__REDACTED__"}])
    assert last_turn(prompt_of(hidden) or []) is None


def test_a_hidden_request_text_is_no_prompt() -> None:
    """``OPENINFERENCE_HIDE_INPUTS`` writes ``__REDACTED__`` for the request text: no prompt (an adapter may show the
    real one, ``PrivateCall.prompt``), and the flattened messages, where the instrumentor kept them, are read."""
    assert prompt_of({"input.value": "__REDACTED__"}) is None
    call = {"id": "c1", "function.name": "search", "function.arguments": '{"q": "a"}'}
    kept = flat([{"role": "assistant", "tool_calls": [call]}, {"role": "tool", "tool_call_id": "c1", "content": "x"}])
    assert prompt_of({**kept, "input.value": "__REDACTED__"}) == prompt_of(kept)


def test_a_malformed_message_keeps_the_turns_read_after_it() -> None:
    text = json.dumps({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "1"}, "not a message",
        {"role": "assistant", "tool_calls": [{"id": "b", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "b", "content": "2"}]})
    assert [(p, [c.call_id for c in calls]) for p, calls in run_so_far(text)] == [(4, ["b"])]


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(), st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.sampled_from(
        ["tool", "assistant", "user", "tool_call_id", "tool_result", "function_call", "tool_call_response",
         "error"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
        ["role", "content", "tool_calls", "tool_call_id", "function", "name", "arguments", "id", "type", "parts",
         "messages", "input", "tool_use_id", "call_id", "output", "is_error", "response", "toolUse", "toolResult",
         "toolUseId", "status", "text", "json"]), inner, max_size=5),
    max_leaves=30).map(json.dumps)))
def test_anything_reads_as_a_turn_or_nothing_and_never_raises(text: str) -> None:
    text = text + ' "tool_call_id"' if not text.startswith(("{", "[")) else text
    found = last_turn(text)
    assert found is None or (isinstance(found[0], int) and all(isinstance(c, PromptCall) for c in found[1]))
    run = run_so_far(text)
    assert all(isinstance(position, int) and calls for position, calls in run)
    assert [position for position, _ in run] == sorted({position for position, _ in run})
    assert found is None or run[-1] == found


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(
    st.builds(lambda i, field: f"llm.input_messages.{i}.message.{field}", st.sampled_from(["0", "1", "2", "x", ""]),
              st.sampled_from(["role", "content", "name", "tool_call_id", "tool_calls.0.tool_call.id",
                               "tool_calls.0.tool_call.function.name", "tool_calls.x.tool_call.function.arguments",
                               "tool_calls.1.tool_call.function.arguments", "contents.0.message_content.text",
                               "contents.0.message_content.image", ""])),
    st.none() | st.integers() | st.text(max_size=6) | st.sampled_from(["tool", "assistant", "model", "user"]) |
    st.lists(st.text(max_size=3), max_size=2), max_size=12))
def test_any_flattened_attributes_read_as_turns_or_nothing_and_never_raise(attributes: dict[str, Any]) -> None:
    prompt = prompt_of(attributes)
    assert prompt is None or isinstance(prompt, list)
    if prompt is not None:
        for turn in (last_turn(prompt), *run_so_far(prompt)):
            assert turn is None or all(isinstance(call, PromptCall) for call in turn[1])


# ------------------------------------------------------------------------------------------ through the engine
def rig() -> tuple[Any, InMemorySpanExporter, spanbreaker.BreakerSpanProcessor]:
    provider = TracerProvider()
    processor = spanbreaker.BreakerSpanProcessor()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(processor)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("app"), exporter, processor


def genai_loop(turns: int, *, tool_spans: bool = False) -> int:
    """A GenAI-shaped loop: each ``chat`` span's ``gen_ai.input.messages`` ends with the last turn's call and its
    (unchanging) result. Returns the model calls that ran."""
    tracer, _, _ = rig()
    history: list[dict[str, Any]] = [{"role": "user", "parts": [{"type": "text", "content": "weather in X?"}]}]
    ran = 0
    with tracer.start_as_current_span("invoke_agent helper", attributes={"gen_ai.operation.name": "invoke_agent"}):
        for turn in range(turns):
            with tracer.start_as_current_span("chat m", attributes={"gen_ai.operation.name": "chat",
                                                                    "gen_ai.input.messages": json.dumps(history)}):
                ran += 1
            call = {"type": "tool_call", "id": f"call_{turn}", "name": "weather", "arguments": {"city": "X"}}
            history.append({"role": "assistant", "parts": [call]})
            if tool_spans:
                with tracer.start_as_current_span("execute_tool weather", attributes={
                        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "weather",
                        "gen_ai.tool.call.arguments": '{"city": "X"}'}) as span:
                    span.set_attribute("gen_ai.tool.call.result", "sunny")
            history.append({"role": "tool", "parts": [{"type": "tool_call_response", "id": f"call_{turn}",
                                                       "response": "sunny"}]})
    return ran


def test_a_genai_prompt_loop_is_stopped_at_the_sixth_model_call() -> None:
    try:
        genai_loop(20)
    except spanbreaker.Tripped as trip:
        assert trip.detector == "tool_repeat" and trip.evidence["calls_from_prompt"] is True
    else:
        raise AssertionError("the loop ran to its end")


def test_prompts_are_not_read_where_tool_spans_exist() -> None:
    """With the tool spans recorded, the same prompts are not read again: four identical calls stay four (read
    twice, they would be seven)."""
    assert genai_loop(4, tool_spans=True) == 4


def test_a_prompt_recorded_only_at_the_end_trips_there_and_vetoes_the_next_call() -> None:
    """OpenTelemetry's util-genai (the openai-v2 instrumentor) sets ``gen_ai.input.messages`` when the call ends: the
    fifth identical call is seen at the end of the sixth model call, and the seventh is vetoed."""
    tracer, exporter, _ = rig()
    history: list[dict[str, Any]] = [{"role": "user", "parts": [{"type": "text", "content": "weather in X?"}]}]
    ran = 0
    try:
        with tracer.start_as_current_span("run"):
            for turn in range(20):
                with tracer.start_as_current_span("chat m", attributes={"gen_ai.operation.name": "chat"}) as span:
                    ran += 1
                    span.set_attribute("gen_ai.input.messages", json.dumps(history))
                    span.set_attribute("gen_ai.usage.input_tokens", 100)
                history.append({"role": "assistant", "parts": [
                    {"type": "tool_call", "id": f"c{turn}", "name": "weather", "arguments": {"city": "X"}}]})
                history.append({"role": "tool", "parts": [
                    {"type": "tool_call_response", "id": f"c{turn}", "response": "sunny"}]})
    except spanbreaker.Tripped as trip:
        assert trip.detector == "tool_repeat" and trip.evidence["calls_from_prompt"] is True
    else:
        raise AssertionError("the loop ran to its end")
    assert ran == 6, "the sixth call's prompt showed the fifth identical call; the seventh was vetoed"
    marked = [s for s in exporter.get_finished_spans() if (s.attributes or {}).get("spanbreaker.tripped")]
    assert {s.name for s in marked} == {"chat m", "run"}


def test_a_prompt_recorded_only_at_the_end_with_no_span_around_the_loop_is_marked_not_stopped() -> None:
    """The documented limit (docs/conformance.md): util-genai's messages arrive at the end, and with no span around
    the loop the next call is a new trace with nothing at its start to read. Each call from the sixth on trips as
    it ends (listeners and metrics hear it; the span has ended, so no attribute can be added); none is vetoed."""
    tracer, exporter, processor = rig()
    history: list[dict[str, Any]] = [{"role": "user", "parts": [{"type": "text", "content": "weather in X?"}]}]
    for turn in range(8):
        with tracer.start_as_current_span("chat m", attributes={"gen_ai.operation.name": "chat"}) as span:
            span.set_attribute("gen_ai.input.messages", json.dumps(history))
        history.append({"role": "assistant", "parts": [
            {"type": "tool_call", "id": f"c{turn}", "name": "weather", "arguments": {"city": "X"}}]})
        history.append({"role": "tool", "parts": [
            {"type": "tool_call_response", "id": f"c{turn}", "response": "sunny"}]})
    assert processor.engine.stats.trips == 3 and processor.engine.stats.blocked == 0
    assert len(exporter.get_finished_spans()) == 8


def test_a_request_set_just_after_the_start_is_read_at_the_end() -> None:
    """A model call span whose request (``input.value``, ``{"messages": [...]}``) is set just after it starts: the
    breaker reads it when the call ends, and the next call is the one vetoed."""
    tracer, _, _ = rig()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "find it"}]
    ran = 0
    try:
        with tracer.start_as_current_span("run"):
            for turn in range(20):
                with tracer.start_as_current_span("completion", attributes={
                        "openinference.span.kind": "LLM"}) as span:
                    ran += 1
                    span.set_attribute("input.value", json.dumps({"messages": messages}))
                messages.append({"role": "assistant", "content": None, "tool_calls": [
                    {"id": f"c{turn}", "type": "function", "function": {"name": "search", "arguments": '{"q": 1}'}}]})
                messages.append({"role": "tool", "tool_call_id": f"c{turn}", "content": "same"})
    except spanbreaker.Tripped as trip:
        assert trip.detector == "tool_repeat"
    else:
        raise AssertionError("the loop ran to its end")
    assert ran == 6


def test_openllmetrys_older_flattened_prompt() -> None:
    """``gen_ai.prompt.<i>.*`` (OpenLLMetry's Ollama instrumentor, content tracing on, set when the call ends): the
    assistant's calls, then the tool's result without a call id, answering them in order; nothing without a result."""
    attributes = {"gen_ai.system": "Ollama", "llm.request.type": "chat",
                  "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "find it",
                  "gen_ai.prompt.1.role": "assistant", "gen_ai.prompt.1.tool_calls.0.name": "search",
                  "gen_ai.prompt.1.tool_calls.0.arguments": '{"query": "same"}',
                  "gen_ai.prompt.2.role": "tool", "gen_ai.prompt.2.content": "page"}
    prompt = prompt_of(attributes)
    assert last_turn(prompt) == (1, [PromptCall("", "search", '{"query": "same"}', "page")])  # type: ignore[arg-type]
    unanswered = {key: value for key, value in attributes.items() if not key.startswith("gen_ai.prompt.2")}
    assert prompt_of(unanswered) is None
    assert prompt_of({"gen_ai.prompt.x.role": "tool", "gen_ai.prompt.1": "tool", "gen_ai.prompt.2.role": 3}) is None
