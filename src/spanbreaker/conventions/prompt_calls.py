"""Tool calls read from a model call's prompt: for agents whose tools leave no span.

An agent written as a plain loop around a model client (``client.chat.completions.create`` with ``tools=``,
then the application runs the requested functions and sends their results back) is traced by the client's
instrumentor alone: model call spans, no tool spans. The loop is still in plain sight. Each prompt ends with the
model's previous turn: an assistant message naming the tool calls it asked for, then their results. This module
reads that last turn, so the engine can feed those calls to the tool detectors as calls whose arguments and
result are known together (as a tool span keyed at its end would be). A trace's first model call reads every turn
since the user's request instead (:func:`run_so_far`): a loop with no span around it makes one trace per model
call, and the prompt is then the only record of the run.

Shapes read (only the turns read are decoded; the rest of the history is skipped without building objects):

* OpenAI Chat Completions (OpenInference's ``input.value`` is the request: ``{"messages": [...], ...}``): an
  ``assistant`` message with ``tool_calls`` (``{"id", "function": {"name", "arguments"}}``), then ``tool``
  messages (``tool_call_id``, ``content``);
* Anthropic Messages: an ``assistant`` message with ``tool_use`` blocks (``id``, ``name``, ``input``), then a
  ``user`` message of ``tool_result`` blocks (``tool_use_id``, ``content``, ``is_error``);
* OpenAI Responses (``{"input": [...]}``): ``function_call`` items (``call_id``, ``name``, ``arguments``), then
  ``function_call_output`` items;
* the OpenTelemetry GenAI conventions' ``gen_ai.input.messages``: an ``assistant`` message with ``tool_call``
  parts (``id``, ``name``, ``arguments``), then ``tool_call_response`` parts (``id``, ``response``);
* a bare JSON array of messages in any of these forms (what some instrumentors record).

A prompt whose last message is a new user request, or whose results do not answer the previous assistant turn's
calls, implies nothing. Anything malformed implies nothing: this never raises past the engine's guard.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from . import genai as ga
from . import openinference as oi

NAME = "prompt_calls"

MARKERS = ('"tool_call_id"', '"tool_use_id"', '"tool_call_response"', '"function_call_output"')
"""Keys only a tool result carries in each shape: a prompt without any of them answers no tool call, and is not
decoded at all (a chat without tools costs four substring scans per model call)."""
MAX_PROMPT_CHARS = 4 * 1024 * 1024
"""Prompts longer than this are not read (past any model's context window; reading costs about a microsecond per
kilobyte, as the instrumentor's own serialisation of the request does)."""
MAX_TAIL = 128
"""Messages read back from a prompt's end for one turn's results and its calls (a turn of more parallel calls
is read as far as this)."""
MAX_RUN_MESSAGES = 1024
"""Messages read back from a prompt's end for the run so far (:func:`run_so_far`): past every loop limit a
detector counts to, and a bound on the work of reading one prompt."""
ERROR_LABEL = "ToolError"
"""The error of a result its own format marks as failed (Anthropic's ``is_error``): a fixed label, never text the
tool wrote."""


@dataclass(frozen=True, slots=True)
class PromptCall:
    """One tool call of the prompt's last turn, with what it returned."""

    call_id: str
    name: str
    arguments: str
    """The arguments as the model wrote them (a JSON text), or the structured input dumped with sorted keys."""
    result: str
    error: str | None = None


class _Request(msgspec.Struct):
    """A request body: only where its messages are; every other field is skipped unread."""

    messages: list[msgspec.Raw] | None = None
    input: msgspec.Raw = msgspec.Raw()


_decode_request = msgspec.json.Decoder(_Request).decode
_decode_list = msgspec.json.Decoder(list[msgspec.Raw]).decode
_decode = msgspec.json.decode


def prompt_text(attributes: Mapping[str, Any]) -> str | None:
    """The prompt as recorded at a model call's start: OpenInference's request text, else GenAI's messages."""
    raw = attributes.get(oi.INPUT)
    if type(raw) is str and raw:
        return raw
    raw = attributes.get(ga.INPUT_MESSAGES)
    return raw if type(raw) is str and raw else None


def last_turn(text: str) -> tuple[int, list[PromptCall]] | None:
    """The tool calls of the prompt's last assistant turn that the prompt also answers, with the position of that
    turn's assistant message (a retried model call re-sends the same prompt: the engine counts a turn once).
    None when the prompt ends otherwise, or cannot be read."""
    turns = _turns(text, MAX_TAIL, 1)
    return turns[-1] if turns else None


def run_so_far(text: str) -> list[tuple[int, list[PromptCall]]]:
    """Every answered tool turn since the prompt's last user request, oldest first, each as :func:`last_turn`
    gives the last one: the run so far, as far as :data:`MAX_RUN_MESSAGES` back.

    A loop with no span around it makes one trace per model call, and its prompt is then the only record of the
    run: this is what lets a trace of one model call see the calls before it. A user request ends the run read
    (what came before it answered an earlier request), as does anything that is not a turn of answered calls."""
    return _turns(text, MAX_RUN_MESSAGES, MAX_RUN_MESSAGES)


def _turns(text: str, depth: int, most: int) -> list[tuple[int, list[PromptCall]]]:
    """Up to ``most`` answered turns read back from the prompt's end, at most ``depth`` messages back, oldest
    first. What was read before a malformed message is kept; a prompt that cannot be decoded gives none."""
    if len(text) > MAX_PROMPT_CHARS:
        return []
    for marker in MARKERS:
        if text.rfind(marker) >= 0:  # from the end: the answers close the prompt's messages
            break
    else:
        return []
    found: list[tuple[int, list[PromptCall]]] = []
    try:
        items = _messages(text)
        if not items:
            return found
        index = len(items) - 1
        floor = max(-1, index - depth)
        while len(found) < most:
            turn = _read_turn(items, index, floor)
            if turn is None:
                break
            found.append(turn)
            index = turn[0] - 1
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, TypeError, AttributeError, KeyError):
        pass
    found.reverse()
    return found


def _messages(text: str) -> list[msgspec.Raw] | None:
    if text.lstrip()[:1] == "[":
        return _decode_list(text)
    request = _decode_request(text)
    if request.messages is not None:
        return request.messages
    value = bytes(request.input)
    if value.lstrip()[:1] == b"[":
        return _decode_list(value)
    return None


def _read_turn(items: list[msgspec.Raw], index: int, floor: int) -> tuple[int, list[PromptCall]] | None:
    """The turn whose results end at ``items[index]``, walking back: results first, then the calls they answer;
    never below ``floor``."""
    answers: list[Answer] = []  # last first
    message: Any = None
    while index > floor:
        message = _decode(items[index])
        if not isinstance(message, dict):
            return None
        found = _results_in(message)
        if found is None:
            break
        answers.extend(reversed(found))
        index -= 1
    else:
        return None
    if not answers:
        return None  # a user request or the model's own words: no call was answered here
    answers.reverse()
    calls = _calls_in(message)
    if calls is None:
        if message.get("type") != "function_call":
            return None
        calls = []  # OpenAI Responses: one item per call, consecutive
        while index > floor:
            item = _decode(items[index])
            if not isinstance(item, dict) or item.get("type") != "function_call":
                break
            calls.append(_call(item.get("call_id"), item.get("name"), item.get("arguments")))
            index -= 1
        calls.reverse()
        index += 1
    by_id = {call_id: (result, error) for call_id, result, error in answers if call_id}
    paired: list[PromptCall] = []
    for position, (call_id, name, arguments) in enumerate(calls):
        if call_id:
            answer = by_id.get(call_id)
        else:  # no ids (some GenAI instrumentors): the n-th answer is the n-th call's
            answer = answers[position][1:] if position < len(answers) and not answers[position][0] else None
        if answer is None:
            continue  # asked for, not answered in this prompt: its result is unknown
        paired.append(PromptCall(call_id, name, arguments, answer[0], answer[1]))
    return (index, paired) if paired else None


Answer = tuple[str, str, str | None]
"""(call id, result text, error label) of one tool result in a prompt."""


def _results_in(message: dict[str, Any]) -> list[Answer] | None:
    """The tool results a message carries, or None when it is no result message (the walk back stops there)."""
    found: list[Answer]
    role = message.get("role")
    if role == "tool" and "tool_call_id" in message:  # OpenAI Chat Completions
        return [(str(message.get("tool_call_id") or ""), _text(message.get("content")), None)]
    kind = message.get("type")
    if kind == "function_call_output":  # OpenAI Responses
        return [(str(message.get("call_id") or ""), _text(message.get("output")), None)]
    parts = message.get("parts")
    if isinstance(parts, list) and role in ("tool", "user"):  # GenAI conventions
        found = [(str(part.get("id") or ""), _text(part.get("response", part.get("result"))), None)
                 for part in parts if isinstance(part, dict) and part.get("type") == "tool_call_response"]
        return found or None
    content = message.get("content")
    if role == "user" and isinstance(content, list):  # Anthropic: a user message of tool_result blocks
        found = [(str(block.get("tool_use_id") or ""),
                  _text(block.get("content")), ERROR_LABEL if block.get("is_error") is True else None)
                 for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]
        return found or None
    return None


def _calls_in(message: dict[str, Any]) -> list[tuple[str, str, str]] | None:
    """The tool calls an assistant message asks for, or None when it asks for none."""
    if message.get("role") != "assistant":
        return None
    calls: list[tuple[str, str, str]] = []
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list):  # OpenAI Chat Completions
        for call in tool_calls:
            if isinstance(call, dict):
                function = call.get("function")
                function = function if isinstance(function, dict) else {}
                calls.append(_call(call.get("id"), function.get("name"), function.get("arguments")))
    for source, wanted in ((message.get("parts"), "tool_call"), (message.get("content"), "tool_use")):
        if isinstance(source, list):  # GenAI parts; Anthropic content blocks
            for block in source:
                if isinstance(block, dict) and block.get("type") == wanted:
                    arguments = block.get("arguments") if wanted == "tool_call" else block.get("input")
                    calls.append(_call(block.get("id"), block.get("name"), arguments))
    return calls or None


def _call(call_id: Any, name: Any, arguments: Any) -> tuple[str, str, str]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, sort_keys=True, ensure_ascii=False,
                                                                   default=str)
    return (str(call_id) if call_id else "", str(name) if name else "tool", text)


def _text(content: Any) -> str:
    """A result's text: a string as it is; a list of content blocks as their texts joined; anything else as JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [block.get("text") for block in content if isinstance(block, dict)]
        if texts and all(isinstance(text, str) for text in texts):
            return "\n".join(texts)  # type: ignore[arg-type]
    if content is None:
        return ""
    return json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)
