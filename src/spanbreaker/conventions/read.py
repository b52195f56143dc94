"""Span -> signal: what the detectors need from a span, read under the conventions in a fixed order.

Each figure is read under its OpenInference key first and falls back to the GenAI ones only when that is absent
(one dict lookup, no call, on the common path), then to framework quirks (span names, envelopes, wrapper
errors). A signal is made when the span starts, from what its inputs show, and completed when it ends, from
what came back: start hooks can veto a call before it runs.

Every reader tolerates missing, oddly typed or huge values: it returns ``None`` or a bounded value, never raises
for bad input.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..fingerprint import SIMILARITY_CHARS, canonical_args, digest, is_empty_result, sample
from ..signals import OPENING_CHARS, AgentRun, ModelCall, ToolCall, as_count, as_float, as_str, pick, text_key
from . import exception_class, ledger, tool_text
from . import frameworks as fw
from . import genai as ga
from . import google_adk as adk
from . import langchain as lc
from . import langfuse as lf
from . import llama_index as li
from . import openinference as oi
from . import openllmetry as ol

_QUERY_RAW_CHARS = 2 * SIMILARITY_CHARS + fw.ENVELOPE_CHARS
"""Recorded arguments this long or longer are a script or a document, not a query (and are not kept)."""
_SAMPLE_CHARS = SIMILARITY_CHARS * 4
"""Results up to this long are their own sample (no copy)."""
_REDACTED = (oi.REDACTED, fw.REDACTED)
"""What instrumentors write in place of a value they hide: the value is unknown, never identical to another."""


def unredacted(value: Any) -> Any:
    """``value``, or None when the instrumentor redacted it."""
    return None if type(value) is str and value in _REDACTED else value


# ------------------------------------------------------------------------------------------------- tools
def tool_name(name: str, attributes: Mapping[str, Any]) -> str:
    value = attributes.get(oi.TOOL_NAME)
    if value is None:
        value = attributes.get(ga.TOOL_NAME)
    text = value if type(value) is str else as_str(value)
    if text:
        return text[:128]
    named = ga.named(name, ga.TOOL_SPAN_PREFIX)
    if named is not None:
        return named[:128]
    return str(name)[:128] if isinstance(name, str) else "tool"


def tool_start(name: str, attributes: Mapping[str, Any], volatile: frozenset[str], cap: int) -> ToolCall:
    """Key the call's arguments as they were recorded; parse them only when a volatile key is present.

    An agent that loops emits the same call text again, so the exact tier keys the recorded text (one hash,
    no JSON round trip on the hot path). Arguments naming a volatile key (a timestamp, a request id) are
    parsed and re-serialised without it, so those calls still match.

    Arguments not on the span yet (the OpenAI Agents instrumentor sets them when the span ends; GenAI content
    capture may be off) are unknown, not empty: the call is keyed when it ends (:func:`fill_tool_result`).
    """
    tool, text = _tool_arguments(name, attributes, volatile, cap)
    if text is None:
        return ToolCall(tool, 0, None, args_known=False)
    key = hash((tool, text)) if len(text) <= cap else hash((tool, digest(text, cap)))
    # Positional (name, key, raw_args): cheaper than keywords on the hot path.
    return ToolCall(tool, key, text if len(text) < _QUERY_RAW_CHARS else None)


def _tool_arguments(name: str, attributes: Mapping[str, Any], volatile: frozenset[str],
                    cap: int) -> tuple[str, str | None]:
    """The tool's name and its canonical argument text (None when no argument key is on the span)."""
    value = attributes.get(oi.TOOL_NAME)
    tool = value[:128] if type(value) is str and value else tool_name(name, attributes)  # common case inline
    raw = attributes.get(oi.INPUT)
    if raw is None:
        raw = unredacted(pick(attributes, ga.TOOL_ARGUMENTS, fw.LEGACY_TOOL_ARGUMENTS, oi.TOOL_PARAMETERS))
        if raw is None:
            raw = attributes.get(ol.ENTITY_INPUT)
            if raw is None:
                raw = attributes.get(lf.INPUT)  # Langfuse's observation: @observe's record of the call, as Traceloop's
            if raw is None:
                return tool, None
            if type(raw) is str:  # OpenLLMetry's LlamaIndex record of the bound arguments: the call in it
                call = ol.llama_index_arguments(raw)
                raw = raw if call is None else call
        elif type(raw) is str and raw.startswith(ol.TOOL_INPUT):  # OpenLLMetry's LangChain record: the call in it
            call = ol.tool_arguments(raw)
            raw = raw if call is None else call
    elif raw == oi.REDACTED:  # hidden by the instrumentor: unknown (tool.parameters is the schema, not the call)
        return tool, None
    text = raw if type(raw) is str else (as_str(raw) or "")
    if text and text[0] in "{[" and _names_volatile_key(text, volatile):
        text = canonical_args(text, volatile, cap)
    return tool, text


def args_fingerprint(tool: str, attributes: Mapping[str, Any], volatile: frozenset[str], cap: int,
                     agent: str | None = None) -> str:
    """A stable hex fingerprint of a tool call's (name, canonical arguments), for evidence; of (agent, name,
    canonical arguments) with ``agent``, for the shared call ledger (:mod:`spanbreaker.state.calls`).

    Computed from the span's recorded attributes: the in-memory keys are per-process hashes, and evidence must
    read the same in every process and every replay. ``tool`` is the call's name as :func:`tool_start` read it
    from the same attributes.
    """
    _, text = _tool_arguments(tool, attributes, volatile, cap)
    if agent is None:
        return digest(f"{tool}\x1f{text or ''}", cap)
    return digest(f"{agent}\x1f{tool}\x1f{text or ''}", cap)


_VOLATILE_PATTERNS: dict[frozenset[str], tuple[str, ...]] = {}
"""The quoted key names to look for, per configured set (configs are few; a dict read is cheaper than a call)."""


def _names_volatile_key(text: str, volatile: frozenset[str]) -> bool:
    patterns = _VOLATILE_PATTERNS.get(volatile)
    if patterns is None:
        patterns = tuple(f'"{key}"' for key in sorted(volatile - fw.ENVELOPE_KEYS))
        if len(_VOLATILE_PATTERNS) < 64:
            _VOLATILE_PATTERNS[volatile] = patterns
    head = text[:4096]  # the string itself when shorter: no copy
    for pattern in patterns:  # noqa: SIM110 (a plain loop: no generator object per call)
        if pattern in head:
            return True
    return False


def fill_tool_result(call: ToolCall, attributes: Mapping[str, Any], error: str | None, cap: int,
                     format_types: frozenset[str], volatile: frozenset[str] = frozenset(),
                     detail: str | None = None) -> None:
    """What came back (``error``: the span's :func:`root_error`, None when it ended clean; ``detail``: its
    :func:`error_detail`); and the arguments, when they were not on the span at start.

    A result that was not recorded (no result key, no failure) is unknown: ``result_known`` is False and the call
    is neither empty nor identical to any other. A call that raised and returned nothing is known by its error:
    class, message and stack trace. Two calls failing with the same class but different messages did not return
    the same thing, as two different result texts would not have.
    """
    if not call.args_known:
        _tool, text = _tool_arguments(call.name, attributes, volatile, cap)
        if text is not None:
            call.key = hash((call.name, text)) if len(text) <= cap else hash((call.name, digest(text, cap)))
            call.raw_args = text if len(text) < _QUERY_RAW_CHARS else None
            call.args_known = call.keyed_at_end = True
    raw = attributes.get(oi.OUTPUT)  # the OpenInference key first: one lookup on the common path
    if raw is None:
        raw = unredacted(pick(attributes, ga.TOOL_RESULT, fw.LEGACY_TOOL_RESULT))
        if raw is None:
            raw = attributes.get(ol.ENTITY_OUTPUT)  # OpenLLMetry's LlamaIndex record: a ToolOutput, unwrapped below
            if raw is None:
                raw = attributes.get(lf.OUTPUT)
        if type(raw) is str and raw.startswith(ol.TOOL_OUTPUT):  # OpenLLMetry's LangChain record: the result in it
            result = ol.tool_result(raw)
            raw = raw if result is None else result
    elif raw == oi.REDACTED:
        raw = None  # hidden by the instrumentor: the result is unknown
    output = raw if type(raw) is str else as_str(raw)
    if output is not None and output.startswith(lc.TOOL_MESSAGE):  # LangChain's envelope: its content
        output = lc.tool_result(output, cap)
    elif output is not None and output.startswith(li.TOOL_OUTPUT) and li.is_tool_output(output):  # LlamaIndex's
        output = li.tool_result(output, cap)
    elif output is not None and output.startswith(lc.TOOL_MESSAGE_REPR):  # a ToolMessage as its str() (OpenLIT)
        content = lc.repr_tool_result(output, cap)
        if content is not None:
            output = content
    elif output is not None and output.startswith(adk.FUNCTION_RESPONSE):  # ADK's FunctionResponse (OpenInference)
        content = adk.tool_result(output, attributes, cap)
        if content is not None:
            output = content
    if output and (error is None or error == tool_text.FLAGGED):
        # A failure the output reports as text (tool_text), also naming one its format only flagged; a failed run by
        # its root class.
        named = tool_text.text_error(output)
        if named == tool_text.EXECUTION_FAILED:
            named = _named_root(output, format_types) or named
        if named is not None:
            error = named
    call.error = error
    text = output if output is not None else ""
    if error is not None and not text:
        text = f"error:{error}" if not detail else f"error:{error}: {detail[:cap]}"
    call.result_key = text_key(text, cap)
    call.result_sample = text if len(text) <= _SAMPLE_CHARS else sample(text)
    call.result_known = output is not None or error is not None
    call.empty = error is None and output is not None and len(output) <= 64 and is_empty_result(output)


# ------------------------------------------------------------------------------------------------ models
def model_start(name: str, attributes: Mapping[str, Any], cap: int, history: bool = True) -> ModelCall:
    """``history``: count the messages re-sent from a session's history. Only an agent's first model call is judged
    on them (``session_bloat``), and counting scans up to ``cap`` characters of the prompt (tens of microseconds
    for a prompt of 64 KB), so the engine asks for it at that call alone."""
    value = attributes.get(oi.MODEL)
    if value is None:
        value = pick(attributes, ga.REQUEST_MODEL, ga.RESPONSE_MODEL)
    model = value if type(value) is str else as_str(value)
    raw = attributes.get(oi.INPUT)
    if type(raw) is not str:
        raw = attributes.get(ga.INPUT_MESSAGES)
        if type(raw) is not str:
            return ModelCall(model, None, 0, 0)
        return ModelCall(model, None, len(raw), ga.history_messages(raw, cap) if history else 0,
                         raw[:OPENING_CHARS])
    count = 0
    if history and raw.find(fw.HISTORY_MARKER, 0, cap) >= 0:  # bounded scan, no copy of the prompt
        count = fw.history_messages(raw, cap)
    return ModelCall(model, None, len(raw), count, raw[:OPENING_CHARS])  # positional: cheaper than keywords


def _positive_count(value: Any) -> int:
    """A token count read as :func:`as_count` does, 0 when it is not one."""
    count = as_count(value)
    return count if count is not None and count > 0 else 0


def fill_model_result(call: ModelCall, attributes: Mapping[str, Any], cap: int) -> None:
    # Each figure reads its OpenInference key first and falls back to the GenAI ones only when it is absent:
    # the same answer as pick over all the keys, with one dict lookup (no call) on the common path. Counts
    # that are plain non-negative ints (the common case) are taken without a call to as_int.
    get = attributes.get
    value = get(oi.MODEL)
    if value is None:
        value = pick(attributes, ga.RESPONSE_MODEL, ga.REQUEST_MODEL, lf.MODEL)
    if value is not None:
        call.model = (value if type(value) is str else as_str(value)) or call.model
    value = get(oi.PROVIDER)
    if value is None:
        value = pick(attributes, ga.PROVIDER, ga.SYSTEM, oi.SYSTEM)
    call.provider = value if type(value) is str or value is None else as_str(value)
    value = get(oi.PROMPT_TOKENS)
    if value is None:
        value = pick(attributes, ga.INPUT_TOKENS, ga.PROMPT_TOKENS)
    prompt = call.prompt_tokens = value if type(value) is int and value >= 0 else as_count(value)
    value = get(oi.COMPLETION_TOKENS)
    if value is None:
        value = pick(attributes, ga.OUTPUT_TOKENS, ga.COMPLETION_TOKENS)
    completion = call.completion_tokens = value if type(value) is int and value >= 0 else as_count(value)
    value = get(oi.TOTAL_TOKENS)
    total = call.total_tokens = value if type(value) is int and value >= 0 else as_count(value)
    if prompt is None and completion is None and total is None and lf.USAGE in attributes:  # a Langfuse generation
        prompt, completion, total, call.cache_read_tokens = lf.usage(attributes)
        call.prompt_tokens, call.completion_tokens, call.total_tokens = prompt, completion, total
    call.tokens = total if total is not None else (prompt or 0) + (completion or 0)
    # The prompt's cached part, for its price: absent on most spans, so three lookups each and no call.
    value = get(oi.CACHE_READ_TOKENS) or get(ga.CACHE_READ_TOKENS) or get(ol.CACHE_READ_TOKENS)
    if value:
        call.cache_read_tokens = _positive_count(value)
    value = get(oi.CACHE_WRITE_TOKENS) or get(ga.CACHE_WRITE_TOKENS) or get(ol.CACHE_WRITE_TOKENS)
    if value:
        call.cache_write_tokens = _positive_count(value)
    value = get(oi.COST_TOTAL)
    if value is not None:
        call.cost_usd = as_float(value)
    value = get(oi.OUTPUT)
    if value is None:
        value = get(ga.OUTPUT_MESSAGES)  # the GenAI conventions' output: a ledger is a message part's text there
    if type(value) is str and value.find(ledger.MARKER, 0, ledger.LEDGER_CHARS) >= 0:
        call.stalled = ledger.stalled(value)
    if call.input_chars == 0:
        raw = get(oi.INPUT)
        if isinstance(raw, str):
            call.input_chars = len(raw)
            call.opening = raw[:OPENING_CHARS]
        else:
            raw = get(ga.INPUT_MESSAGES)  # pydantic-ai sets the messages sent only when the span ends
            if isinstance(raw, str) and raw:
                call.input_chars = len(raw)
                call.opening = raw[:OPENING_CHARS]
                if call.first_in_scope:  # judged at an agent's first model call only (model_start)
                    call.history_messages = ga.history_messages(raw, cap)
                call.input_at_end = True
    if call.opening is None:
        raw = get(ol.FIRST_PROMPT)  # OpenLLMetry's flattened prompt: no request text, its first message
        if type(raw) is str:
            call.opening = raw[:OPENING_CHARS]


# ------------------------------------------------------------------------------------------------ agents
def agent_name(name: str, attributes: Mapping[str, Any]) -> str:
    value = as_str(pick(attributes, oi.AGENT_NAME, ga.AGENT_NAME, oi.GRAPH_NODE, ol.ENTITY_NAME))
    if value:
        return value[:128]
    if isinstance(name, str):
        named = fw.agent_from_name(name)
        if named is None:
            named = ga.named(name, ga.AGENT_SPAN_PREFIX)
        return (named if named is not None else name)[:128]
    return "agent"


_SESSION_CHARS = 128
"""A longer session id is kept as its digest: the session table holds up to 10,000 of them."""


def agent_start(name: str, attributes: Mapping[str, Any], cap: int) -> AgentRun:
    agent = agent_name(name, attributes)
    task = as_str(unredacted(pick(attributes, oi.INPUT, ga.INPUT_MESSAGES)))
    session = as_str(pick(attributes, oi.SESSION, ga.CONVERSATION))
    if session is not None and len(session) > _SESSION_CHARS:  # the engine's session table outlives the trace
        session = digest(session, cap)
    return AgentRun(name=agent, task_key=text_key(task or "", cap), task_known=task is not None, session=session)


def fill_agent_result(run: AgentRun, attributes: Mapping[str, Any], error: str | None, cap: int) -> None:
    if not run.task_known:
        task = as_str(unredacted(pick(attributes, oi.INPUT, ga.INPUT_MESSAGES)))
        if task is not None:
            run.task_key, run.task_known = text_key(task, cap), True
    output = as_str(unredacted(pick(attributes, oi.OUTPUT, ga.OUTPUT_MESSAGES, fw.FINAL_RESULT)))
    run.output_known = output is not None
    run.output_text = output[:cap] if output is not None else None
    run.output_key = text_key(output or "", cap)
    run.error = error
    run.validation_failed = (attributes.get(fw.VALIDATION_FAILED) is True
                             or run.error in fw.VALIDATION_ERRORS)


# ------------------------------------------------------------------------------------------------ errors
_CLASS_BEFORE_COLON = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{0,127}):")
"""Where Python's ``f"{type(e).__name__}: {e}"`` puts a class: a word right before a colon."""
_CLASS_WORD = re.compile(r"\b([A-Z][A-Za-z0-9_]{0,127}(?:Error|Exception|Exit|Interrupt))\b")
"""Class-shaped words anywhere (a message that names its root without the colon)."""
_MESSAGE_CHARS = 4096


def error_detail(events: Sequence[Any], status: Any) -> str | None:
    """What a failed span says of its failure: the last ``exception`` event's message and stack trace (the
    traceback a tool that printed it would have returned as text), else the status description; None when it
    says nothing."""
    detail: str | None = None
    try:
        for event in events or ():
            if getattr(event, "name", None) == ga.EXCEPTION_EVENT:
                attributes = getattr(event, "attributes", None) or {}
                message = as_str(attributes.get(ga.EXCEPTION_MESSAGE)) or ""
                stack = as_str(attributes.get(ga.EXCEPTION_STACKTRACE)) or ""
                detail = f"{message}\n{stack}" if stack else message or detail
    except Exception:  # odd event objects: as no event
        detail = None
    return detail or as_str(getattr(status, "description", None)) or None


def root_error(events: Sequence[Any], status: Any, format_types: frozenset[str]) -> str | None:
    """The root exception class of a failed span, unwrapping framework wrappers.

    The class comes from the structured ``exception.type``. smolagents wraps a ``KeyError`` as
    ``AgentExecutionError`` whose message ends in ``KeyError: 'x'``: then, and for a failed span with no
    exception event, the root is the last word of the text that is a real exception class (see
    ``exception_class``), never a word for its shape: the text holds the model's code and the looked-up data.
    Returns ``None`` for a span that did not fail, ``"Error"`` for a failure of no known class. The engine
    decides a span that ended clean (no events, status unset or OK: most spans) without calling this.
    """
    found: str | None = None
    message: str | None = None
    try:
        for event in events or ():
            if getattr(event, "name", None) != ga.EXCEPTION_EVENT:
                continue
            attributes = getattr(event, "attributes", None) or {}
            etype = as_str(attributes.get(ga.EXCEPTION_TYPE))
            if etype:
                # a structured type that is no class path is treated as a failure of unknown class
                found = exception_class.from_type_field(etype) or "Error"
                message = as_str(attributes.get(ga.EXCEPTION_MESSAGE))
    except Exception:  # odd event objects: treat as no event
        found = None
    failed = found is not None
    description = None
    code = getattr(status, "status_code", None)
    if code is not None and getattr(code, "name", "") == "ERROR":
        failed = True
        description = as_str(getattr(status, "description", None))
    if not failed:
        return None
    if found is not None and found in format_types:
        return found
    if found is None or found in fw.WRAPPER_ERRORS or found == "Error":
        root = _named_root(message or description or "", format_types)
        if root is not None:
            return root
    return found if found is not None else "Error"


def _named_root(text: str, format_types: frozenset[str]) -> str | None:
    """The last real, non-wrapper exception class the text names, preferring ``Class:`` (Python's own format)."""
    text = text[:_MESSAGE_CHARS]
    for pattern in (_CLASS_BEFORE_COLON, _CLASS_WORD):
        names: list[str] = pattern.findall(text)  # typed: mypyc cannot reverse a list of Any
        for name in reversed(names):
            if name in format_types or (name not in fw.WRAPPER_ERRORS
                                        and exception_class.is_exception_class(name, _KNOWN_NAMES)):
                return str(name)
    return None


_KNOWN_NAMES = fw.VALIDATION_ERRORS | fw.ADAPTER_ERRORS
"""Classes the conventions and the adapters name that may not be loaded here (a replayed trace of another
framework, a refusal the Agno adapter records)."""
