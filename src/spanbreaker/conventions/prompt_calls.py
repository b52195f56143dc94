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
* Google Gemini (``google-genai``; OpenInference's ``input.value`` is ``{"contents": [...], ...}``): a ``model``
  message whose ``parts`` hold ``function_call`` (``name``, ``args``, an optional ``id``), then a ``user`` message
  of ``function_response`` parts (``name``, ``response``); the REST API's camelCase spellings too;
* AWS Bedrock Converse (OpenInference's Bedrock instrumentor records ``input.value`` as the bare array of the
  request's ``messages``): an ``assistant`` message whose ``content`` holds ``toolUse`` blocks (``toolUseId``,
  ``name``, ``input``), then a ``user`` message of ``toolResult`` blocks (``toolUseId``, ``content``: ``text`` or
  ``json`` blocks, ``status``: ``error`` marks a failed call);
* Ollama (``ollama.Client.chat``; OpenInference's ``input.value`` is ``{"messages": [...], ...}``): an ``assistant``
  message with ``tool_calls`` (``{"function": {"name", "arguments"}}``, no call id), then ``tool`` messages
  (``content``, ``tool_name``) answering the calls in order;
* a bare JSON array of messages in any of these forms (what some instrumentors record);
* OpenInference's flattened ``llm.input_messages.*`` attributes, where no request text is on the span yet
  (Google GenAI's instrumentor sets its request text only at the end); OpenLLMetry's older flattened prompt,
  ``gen_ai.prompt.<i>.*`` (its Ollama, Mistral AI, Cohere ... instrumentors, set when the call ends);
* a structured output re-asked in a user message (Instructor's JSON modes, "Correct your JSON ONLY RESPONSE, based on
  the following errors: ..."; "Validation Error(s) found: ..." where the model answered a tool mode with text or
  Anthropic's JSON mode quotes the attempt): read as a call of :data:`STRUCTURED_OUTPUT` whose arguments are the
  model's answer just before (empty where the re-ask quotes it) and whose result is the re-ask, failed with
  ``OutputValidationError``, one turn per re-ask.

A prompt whose last message is a new user request, or whose results do not answer the previous assistant turn's
calls, implies nothing. Anything malformed implies nothing: this never raises past the engine's guard.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from . import frameworks as fw
from . import genai as ga
from . import langfuse as lf
from . import openinference as oi
from . import tool_text

NAME = "prompt_calls"

MARKERS = ('"tool_call_id"', '"tool_use_id"', '"tool_call_response"', '"function_call_output"',
           '"function_response"', '"functionResponse"', '"toolResult"', '"role": "tool"', '"role":"tool"',
           *tool_text.STRUCTURED_REASKS)
"""Keys only a tool result carries in each shape, and the openings of a structured-output re-ask: a prompt without
any of them answers no tool call, and is not decoded at all (a chat without tools costs a dozen substring scans per
model call)."""
STRUCTURED_OUTPUT = "structured_output"
"""The tool name a re-asked structured output is read under (a JSON mode's answer is no tool call of its own)."""
MAX_PROMPT_CHARS = 4 * 1024 * 1024
"""Prompts longer than this are not read (past any model's context window; reading costs about a microsecond per
kilobyte, as the instrumentor's own serialisation of the request does)."""
MAX_TAIL = 128
"""Messages read back from a prompt's end for one turn's results and its calls (a turn of more parallel calls
is read as far as this)."""
MAX_RUN_MESSAGES = 1024
"""Messages read back from a prompt's end for the run so far (:func:`run_so_far`): past every loop limit a
detector counts to, and a bound on the work of reading one prompt."""
ERROR_LABEL = tool_text.FLAGGED
"""The error of a result its own format marks as failed (Anthropic's ``is_error``, Bedrock Converse's ``status``
``error``): a fixed label, never text the tool wrote (refined by the text's own marker, :mod:`.tool_text`)."""


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
    contents: list[msgspec.Raw] | None = None
    input: msgspec.Raw = msgspec.Raw()


_decode_request = msgspec.json.Decoder(_Request).decode
_decode_list = msgspec.json.Decoder(list[msgspec.Raw]).decode
_decode = msgspec.json.decode


Prompt = str | list[dict[str, Any]]
"""A prompt as a span records it: a JSON text (a request, or a bare array of messages), or messages already taken
apart (OpenInference's flattened ``llm.input_messages.*`` attributes, put back together by :func:`prompt_of`)."""


def prompt_of(attributes: Mapping[str, Any]) -> Prompt | None:
    """The prompt as recorded at a model call's start: OpenInference's request text, else GenAI's messages, else
    Pydantic Logfire's request body (its first format), else a Langfuse generation's input, else OpenInference's
    flattened messages (what Google GenAI's instrumentor sets at start; its request text comes at the end). A request
    text the instrumentor hid (``__REDACTED__``) is no prompt."""
    raw = attributes.get(oi.INPUT)
    if type(raw) is str and raw and raw != oi.REDACTED:
        return raw
    raw = attributes.get(ga.INPUT_MESSAGES)
    if type(raw) is str and raw:
        return raw
    raw = fw.logfire_request(attributes)
    if type(raw) is str and raw:
        return raw
    raw = lf.generation_input(attributes)
    if type(raw) is str and raw:
        return raw
    return _flattened(attributes) or _flattened_legacy(attributes)


def last_turn(prompt: Prompt) -> tuple[int, list[PromptCall]] | None:
    """The tool calls of the prompt's last assistant turn that the prompt also answers, with the position of that
    turn's assistant message (a retried model call re-sends the same prompt: the engine counts a turn once).
    None when the prompt ends otherwise, or cannot be read."""
    turns, _ = _turns(prompt, MAX_TAIL, 1)
    return turns[-1] if turns else None


def last_turn_after(prompt: Prompt) -> tuple[tuple[int, list[PromptCall]] | None, bool]:
    """:func:`last_turn`, and whether the message just before that turn is a user's request: the turn is then the
    first of a new run (the user asked again), so what the calls before it repeated is past. One reading of the
    prompt answers both."""
    turns, after_request = _turns(prompt, MAX_TAIL, 1)
    return (turns[-1] if turns else None), after_request


def run_so_far(prompt: Prompt) -> list[tuple[int, list[PromptCall]]]:
    """Every answered tool turn since the prompt's last user request, oldest first, each as :func:`last_turn`
    gives the last one: the run so far, as far as :data:`MAX_RUN_MESSAGES` back.

    A loop with no span around it makes one trace per model call, and its prompt is then the only record of the
    run: this is what lets a trace of one model call see the calls before it. A user request ends the run read
    (what came before it answered an earlier request), as does anything that is not a turn of answered calls."""
    return _turns(prompt, MAX_RUN_MESSAGES, MAX_RUN_MESSAGES)[0]


def _turns(prompt: Prompt, depth: int, most: int) -> tuple[list[tuple[int, list[PromptCall]]], bool]:
    """Up to ``most`` answered turns read back from the prompt's end, at most ``depth`` messages back, oldest
    first, and whether a user's request comes just before the oldest of them. What was read before a malformed
    message is kept; a prompt that cannot be decoded gives none."""
    items: list[Any] | None
    decode: Callable[[Any], Any]
    found: list[tuple[int, list[PromptCall]]] = []
    after_request = False
    try:
        if isinstance(prompt, str):
            if len(prompt) > MAX_PROMPT_CHARS:
                return found, False
            for marker in MARKERS:
                if prompt.rfind(marker) >= 0:  # from the end: the answers close the prompt's messages
                    break
            else:
                return found, False
            items, decode = _messages(prompt), _decode
        else:
            items, decode = prompt, _as_is
        if not items:
            return found, False
        index = len(items) - 1
        floor = max(-1, index - depth)
        while len(found) < most:
            turn = _read_turn(items, index, floor, decode)
            if turn is None:
                break
            found.append(turn)
            index = turn[0] - 1
        if found and index >= 0:
            before: Any = items[index]
            after_request = _is_request(decode(before))
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, TypeError, AttributeError, KeyError):
        pass
    found.reverse()
    return found, after_request


def _is_request(message: Any) -> bool:
    """Whether a message is a user's request (a user message that carries no tool results and re-asks nothing)."""
    return (isinstance(message, dict) and message.get("role") in ("user", "human") and _results_in(message) is None
            and _reask_in(message) is None)


def _as_is(message: Any) -> Any:
    return message


_FLAT = "llm.input_messages."
_FLAT_CALLS = "tool_calls."
_FLAT_PARTS = "contents."


def _flattened(attributes: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """OpenInference's flattened input messages (``llm.input_messages.<i>.message.role``, ``.content``,
    ``.tool_call_id``, ``.tool_calls.<j>.tool_call.function.name`` ...) as Chat Completions messages; None unless
    one of them is a tool result (``role`` ``tool``)."""
    messages = _collect(attributes, _FLAT, ".message.", ".tool_call.")
    return None if messages is None else [_as_chat(messages[index], "function.") for index in sorted(messages)]


_LEGACY = "gen_ai.prompt."
"""OpenLLMetry's older flattened prompt (its Ollama, Mistral AI, Cohere ... instrumentors, content tracing on):
``gen_ai.prompt.<i>.role``, ``.content``, ``.tool_call_id``, ``.tool_calls.<j>.name`` / ``.arguments`` / ``.id``."""


def _flattened_legacy(attributes: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """OpenLLMetry's older flattened prompt as Chat Completions messages (a tool result without a call id answers its
    turn's calls in order, as Ollama's); None unless one of them is a tool result (``role`` ``tool``)."""
    messages = _collect(attributes, _LEGACY, ".", ".")
    return None if messages is None else [_as_chat(messages[index], "") for index in sorted(messages)]


def _collect(attributes: Mapping[str, Any], prefix: str, message_separator: str,
             call_separator: str) -> dict[int, dict[str, Any]] | None:
    """Flattened messages (``<prefix><i><message_separator><field>``; a tool call's
    ``tool_calls.<j><call_separator><part>``; content parts ``contents.<k>.message_content.text``) by index, each a
    dict of its fields; None unless one of them is a tool result (``role`` ``tool``)."""
    messages: dict[int, dict[str, Any]] = {}
    answered = False
    for key, value in attributes.items():
        if type(key) is not str or not key.startswith(prefix):
            continue
        index, _, field = key[len(prefix):].partition(message_separator)
        if not index.isdigit() or not field:
            continue
        message = messages.setdefault(int(index), {})
        if field.startswith(_FLAT_CALLS):
            number, _, part = field[len(_FLAT_CALLS):].partition(call_separator)
            if number.isdigit() and part:
                message.setdefault(_FLAT_CALLS, {}).setdefault(int(number), {})[part] = value
        elif field.startswith(_FLAT_PARTS):  # content as parts: contents.<k>.message_content.text
            number, _, part = field[len(_FLAT_PARTS):].partition(".message_content.")
            if number.isdigit() and part == "text":
                message.setdefault(_FLAT_PARTS, {})[int(number)] = value
        else:
            message[field] = value
            answered = answered or (field == "role" and value == "tool")
    return messages if answered else None


def _as_chat(flat: dict[str, Any], function: str) -> dict[str, Any]:
    """One collected message as a Chat Completions message; ``function``: what prefixes a call's ``name`` and
    ``arguments`` (OpenInference's ``function.``)."""
    calls = flat.get(_FLAT_CALLS)
    if calls:
        return {"role": "assistant", "tool_calls": [
            {"id": call.get("id"), "function": {"name": call.get(function + "name"),
                                                "arguments": call.get(function + "arguments")}}
            for _, call in sorted(calls.items())]}
    content = flat.get("content")
    if content is None and flat.get(_FLAT_PARTS):
        content = "\n".join(str(text) for _, text in sorted(flat[_FLAT_PARTS].items()))
    if flat.get("role") == "tool":
        if content is None or content == oi.REDACTED:  # not recorded, or hidden (OPENINFERENCE_HIDE_INPUT_TEXT)
            return {"role": "tool"}  # no result known: not read as one (a hidden result would read as identical)
        return {"role": "tool", "tool_call_id": flat.get("tool_call_id") or "", "content": content}
    return {"role": flat.get("role"), "content": content}


def _messages(text: str) -> list[msgspec.Raw] | None:
    if text.lstrip()[:1] == "[":
        return _decode_list(text)
    request = _decode_request(text)
    if request.messages is not None:
        return request.messages
    if request.contents is not None:
        return request.contents
    value = bytes(request.input)
    if value.lstrip()[:1] == b"[":
        return _decode_list(value)
    return None


def _read_turn(items: list[Any], index: int, floor: int,
               decode: Callable[[Any], Any]) -> tuple[int, list[PromptCall]] | None:
    """The turn whose results end at ``items[index]``, walking back: results first, then the calls they answer;
    never below ``floor``."""
    answers: list[Answer] = []  # last first
    message: Any = None
    while index > floor:
        message = decode(items[index])
        if not isinstance(message, dict):
            return None
        found = _results_in(message)
        if found is None:
            if not answers:  # the prompt's last message answers no call: it may re-ask for a structured output
                reask = _reask_in(message)
                if reask is not None:
                    return _reask_turn(items, index, floor, decode, reask)
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
            item = decode(items[index])
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


def _reask_turn(items: list[Any], index: int, floor: int, decode: Callable[[Any], Any],
                reask: str) -> tuple[int, list[PromptCall]]:
    """A structured-output re-ask at ``items[index]`` as a turn of its own: the call is the model's answer just before
    it (an assistant message without tool calls), or, where the re-ask follows no such answer (it quotes the
    attempt), a call with no arguments at the re-ask's own position."""
    if index - 1 > floor:
        answer = decode(items[index - 1])
        if isinstance(answer, dict) and answer.get("role") in ("assistant", "model") and _calls_in(answer) is None:
            return index - 1, [PromptCall("", STRUCTURED_OUTPUT, _text(_content_of(answer)), reask,
                                          tool_text.OUTPUT_INVALID)]
    return index, [PromptCall("", STRUCTURED_OUTPUT, "", reask, tool_text.OUTPUT_INVALID)]


def _reask_in(message: dict[str, Any]) -> str | None:
    """The text of a user message that re-asks for a structured output (:data:`.tool_text.STRUCTURED_REASKS`), or
    None: a string, or text blocks or parts, the first opening with the re-ask."""
    if message.get("role") != "user":
        return None
    content = _content_of(message)
    if isinstance(content, list):  # text blocks (Anthropic: "text"), parts (Gemini: "text"; GenAI: "content")
        texts = [_text_part(block) for block in content]
        if not texts or not all(isinstance(text, str) for text in texts):
            return None
        content = "\n".join(texts)  # type: ignore[arg-type]
    if isinstance(content, str) and content.startswith(tool_text.STRUCTURED_REASKS):
        return content
    return None


def _text_part(block: Any) -> str | None:
    """The text of a text block or part, or None for any other (a tool result block is no re-ask, whatever it says)."""
    if not isinstance(block, dict) or block.get("type", "text") != "text":
        return None
    text = block.get("text", block.get("content"))
    return text if isinstance(text, str) else None


def _content_of(message: dict[str, Any]) -> Any:
    """A message's content: Chat Completions' and Anthropic's ``content``, or GenAI's and Gemini's ``parts``."""
    content = message.get("content")
    return message.get("parts") if content is None else content


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
    if isinstance(parts, list) and role in ("tool", "user", "function"):
        found = []
        for part in parts:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "tool_call_response":  # GenAI conventions
                result = part.get("response", part.get("result"))
                found.append((str(part.get("id") or ""), _text(result),
                              tool_text.OUTPUT_INVALID if _validation_errors(result) else None))
                continue
            response = part.get("function_response", part.get("functionResponse"))  # Gemini
            if isinstance(response, dict):
                found.append((str(response.get("id") or ""), _text(response.get("response")), None))
        return found or None
    content = message.get("content")
    if role == "tool" and isinstance(content, str):  # Ollama: no call id, answers its turn's calls in order
        return [("", content, None)]
    if role == "user" and isinstance(content, list):  # Anthropic / Bedrock Converse: tool_result / toolResult blocks
        found = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":  # Anthropic
                found.append((str(block.get("tool_use_id") or ""), _text(block.get("content")),
                              ERROR_LABEL if block.get("is_error") is True else None))
                continue
            result = block.get("toolResult")  # Bedrock Converse
            if isinstance(result, dict):
                found.append((str(result.get("toolUseId") or ""), _converse_text(result.get("content")),
                              ERROR_LABEL if result.get("status") == "error" else None))
        return found or None
    return None


def _calls_in(message: dict[str, Any]) -> list[tuple[str, str, str]] | None:
    """The tool calls an assistant message asks for, or None when it asks for none."""
    role = message.get("role")
    if role != "assistant" and role != "model":
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
        if isinstance(source, list):  # GenAI parts (Gemini's among them); Anthropic content blocks
            for block in source:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == wanted:
                    arguments = block.get("arguments") if wanted == "tool_call" else block.get("input")
                    calls.append(_call(block.get("id"), block.get("name"), arguments))
                    continue
                function = block.get("function_call", block.get("functionCall"))  # Gemini
                if isinstance(function, dict):
                    calls.append(_call(function.get("id"), function.get("name"), function.get("args")))
                    continue
                use = block.get("toolUse")  # Bedrock Converse
                if isinstance(use, dict):
                    calls.append(_call(use.get("toolUseId"), use.get("name"), use.get("input")))
    return calls or None


def _call(call_id: Any, name: Any, arguments: Any) -> tuple[str, str, str]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, sort_keys=True, ensure_ascii=False,
                                                                   default=str)
    return (str(call_id) if call_id else "", str(name) if name else "tool", text)


def _validation_errors(result: Any) -> bool:
    """Whether a call's result is pydantic's list of validation errors (``ValidationError.errors()``: ``type``,
    ``loc``, ``msg`` each): what pydantic-ai sends back, as the call's response, when the model's output or a tool
    call's arguments failed their schema. A malformed call, named as Instructor's re-ask is (:mod:`.tool_text`)."""
    return isinstance(result, list) and bool(result) and all(
        isinstance(error, dict) and "loc" in error and "msg" in error and "type" in error for error in result)


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


def _converse_text(content: Any) -> str:
    """A Bedrock Converse tool result's text: its ``text`` blocks as they are, its ``json`` blocks as JSON with
    sorted keys (the same document reads the same however the application built it), joined; anything else as
    :func:`_text` reads it."""
    if not isinstance(content, list):
        return _text(content)
    parts: list[str] = []
    for block in content:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict) and "json" in block:
            parts.append(json.dumps(block["json"], sort_keys=True, ensure_ascii=False, default=str))
        else:  # an image or a document: its JSON, so a different one reads as a different result
            parts.append(json.dumps(block, sort_keys=True, ensure_ascii=False, default=str))
    return "\n".join(parts)
