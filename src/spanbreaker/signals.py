"""From spans to framework-neutral signals: what kind of span this is, and the figures the detectors need.

Reads OpenInference attributes (``openinference.span.kind``, ``tool.name``, ``input.value``,
``llm.token_count.*``, ``llm.cost.*``) and the OTel GenAI ones (``gen_ai.operation.name``,
``gen_ai.tool.name``, ``gen_ai.usage.*``). When span limits evicted the kind attribute (Agno's LLM spans under
the default 128-attribute limit), the span name decides.

Every reader here tolerates missing, oddly typed or huge values: it returns ``None`` or a bounded value,
never raises for bad input.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from opentelemetry.trace import Status, StatusCode

from .fingerprint import SIMILARITY_CHARS, canonical_args, digest, is_empty_result, sample, similarity_text


class Kind(IntEnum):
    OTHER = 0
    AGENT = 1
    CHAIN = 2
    LLM = 3
    TOOL = 4


KIND_BY_OPENINFERENCE = {
    "AGENT": Kind.AGENT, "CHAIN": Kind.CHAIN, "LLM": Kind.LLM, "TOOL": Kind.TOOL,
}
_KIND_BY_GENAI_OPERATION = {
    "invoke_agent": Kind.AGENT, "create_agent": Kind.AGENT, "invoke_workflow": Kind.CHAIN,
    "execute_tool": Kind.TOOL, "chat": Kind.LLM, "text_completion": Kind.LLM, "generate_content": Kind.LLM,
}
_LLM_NAME_SUFFIXES = (".invoke", ".ainvoke", ".invoke_stream", ".ainvoke_stream", ".generate", ".generate_stream",
                      ".create", ".acreate")
_AGENT_NAME_SUFFIXES = (".run", ".arun")

GATED_KINDS = frozenset({Kind.AGENT, Kind.LLM, Kind.TOOL})
_AGENT, _CHAIN, _LLM, _TOOL, _OTHER = Kind.AGENT, Kind.CHAIN, Kind.LLM, Kind.TOOL, Kind.OTHER
"""Members as module constants: ``Kind.TOOL`` is a slow class attribute lookup on Python 3.11."""
"""Span kinds that stand for a call the breaker can veto."""


def classify(name: str, attributes: Mapping[str, Any]) -> Kind:
    """The span's kind from its attributes, else from its name."""
    value = attributes.get("openinference.span.kind")
    if isinstance(value, str):
        kind = KIND_BY_OPENINFERENCE.get(value) or KIND_BY_OPENINFERENCE.get(value.upper())
        if kind is not None:
            return kind
    value = attributes.get("gen_ai.operation.name")
    if isinstance(value, str):
        kind = _KIND_BY_GENAI_OPERATION.get(value)
        if kind is not None:
            return kind
    if not isinstance(name, str):
        return _OTHER
    if name.endswith(_LLM_NAME_SUFFIXES):
        return _LLM
    if name.endswith(_AGENT_NAME_SUFFIXES):
        return _AGENT
    if name.startswith("Step "):
        return _CHAIN
    if name.startswith("invoke_agent "):
        return _AGENT
    if name.startswith("execute_tool "):
        return _TOOL
    return _OTHER


# ----------------------------------------------------------------------------------------------- readers
def raw_attributes(span: Any) -> Mapping[str, Any]:
    """The span's attributes as a plain dict when the SDK keeps one, else its public mapping.

    The SDK's ``BoundedAttributes`` answers every lookup through Python-level methods (and a
    ``mappingproxy`` on ended spans); reading its dict directly makes each lookup C-speed. Any other span
    object (a replayed span, a future SDK) falls back to ``span.attributes``.
    """
    raw = getattr(getattr(span, "_attributes", None), "_dict", None)
    if type(raw) is dict:
        return raw
    attributes = getattr(span, "attributes", None)
    return attributes if attributes is not None else {}


def as_str(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float):
        return int(value) if value == value and 0 <= value < 1e18 else None
    if isinstance(value, str) and 0 < len(value) < 19 and value.isdigit():
        return int(value)
    return None


def _as_count(value: Any) -> int | None:
    """:func:`as_int`, with the common cases (absent, a plain non-negative int) decided inline."""
    if value is None:
        return None
    if type(value) is int:
        return value if value >= 0 else None
    return as_int(value)


def as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        f = float(value)
        return f if f == f and 0.0 <= f < 1e15 else None
    if isinstance(value, str) and 0 < len(value) < 32:
        try:
            f = float(value)
        except ValueError:
            return None
        return f if f == f and 0.0 <= f < 1e15 else None
    return None


def _pick(attributes: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = attributes.get(key)
        if value is not None:
            return value
    return None


# ----------------------------------------------------------------------------------------------- signals
@dataclass(slots=True)
class ToolCall:
    """A tool span: what was asked at start, what came back at end.

    Keys are Python hashes of the recorded text (bounded by ``cap``: longer text is digested first). They
    only ever meet keys made in the same process, and a hash is a fraction of the cost of a digest (evidence
    carries a stable digest instead: :func:`args_fingerprint`). The text forms that near-duplicate
    comparison needs are computed on first need, since most calls are never compared fuzzily.
    """

    name: str
    key: int
    """Hash of (tool name, canonical arguments)."""
    raw_args: str | None
    """The recorded arguments when short enough to be a query ('' for none), else None (a script, a
    document: never compared fuzzily). Never exported."""
    result_key: int = 0
    result_sample: str = ""
    """Head and tail of the raw result, folded into :meth:`result_text` only when a comparison needs it."""
    empty: bool = False
    error: str | None = None
    """Root exception class name when the call failed."""
    _args_text: str | None = None
    _args_sorted: str | None = None
    _result_text: str | None = None

    def args_text(self) -> str:
        """Normalised arguments for near-duplicate comparison ('' when not query-sized)."""
        if self._args_text is None:
            raw = self.raw_args
            self._args_text = "" if raw is None else _ARGS_WRAPPER.sub("", similarity_text(raw), count=1)
        return self._args_text

    def query_sized(self) -> bool:
        """Arguments short enough to be compared fuzzily (a search query, not a script)."""
        return self.raw_args is not None and len(self.args_text()) < SIMILARITY_CHARS

    def args_sorted(self) -> str:
        """The argument words in sorted order, computed once: comparing these is rapidfuzz's token_sort_ratio
        without re-sorting every earlier call's words at every comparison."""
        if self._args_sorted is None:
            self._args_sorted = " ".join(sorted(self.args_text().split()))
        return self._args_sorted

    def result_text(self) -> str:
        """Normalised, truncated result for near-duplicate comparison, computed on first need."""
        if self._result_text is None:
            self._result_text = similarity_text(self.result_sample)
        return self._result_text


def _text_key(text: str, cap: int) -> int:
    """A comparison key for ``text`` that reads at most ``cap`` characters of it (see :class:`ToolCall`)."""
    return hash(text) if len(text) <= cap else hash(digest(text, cap))


def delegation_key(callee: str, task_key: int) -> int:
    """The key of a delegation (callee, task) in the caller's history."""
    return hash((callee, task_key))


@dataclass(slots=True)
class ModelCall:
    model: str | None
    provider: str | None = None
    input_chars: int = 0
    history_messages: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    cost_usd: float | None = None
    tokens: int = 0
    """Tokens the call used: the reported total, else prompt + completion (set with the result)."""


@dataclass(slots=True)
class StepEnd:
    error: str | None
    """Root exception class of the step's error, ``None`` for a clean step."""


@dataclass(slots=True)
class AgentRun:
    name: str
    task_key: int
    """Key of the task text (see :class:`ToolCall` for keys)."""
    output_key: int = 0
    output_text: str | None = None
    error: str | None = None
    session: str | None = None
    validation_failed: bool = False
    session_failures: int = 0


def tool_name(name: str, attributes: Mapping[str, Any]) -> str:
    value = attributes.get("tool.name")
    if value is None:
        value = attributes.get("gen_ai.tool.name")
    text = value if type(value) is str else as_str(value)
    if text:
        return text[:128]
    if isinstance(name, str) and name.startswith("execute_tool "):
        return name[len("execute_tool "):][:128]
    return str(name)[:128] if isinstance(name, str) else "tool"


def tool_start(name: str, attributes: Mapping[str, Any], volatile: frozenset[str], cap: int) -> ToolCall:
    """Key the call's arguments as they were recorded; parse them only when a volatile key is present.

    An agent that loops emits the same call text again, so the exact tier keys the recorded text (one hash,
    no JSON round trip on the hot path). Arguments naming a volatile key (a timestamp, a request id) are
    parsed and re-serialised without it, so those calls still match.
    """
    tool, text = _tool_arguments(name, attributes, volatile, cap)
    key = hash((tool, text)) if len(text) <= cap else hash((tool, digest(text, cap)))
    # Positional (name, key, raw_args): cheaper than keywords on the hot path.
    return ToolCall(tool, key, text if len(text) < _QUERY_RAW_CHARS else None)


def _tool_arguments(name: str, attributes: Mapping[str, Any], volatile: frozenset[str], cap: int) -> tuple[str, str]:
    """The tool's name and its canonical argument text."""
    value = attributes.get("tool.name")
    tool = value[:128] if type(value) is str and value else tool_name(name, attributes)  # common case inline
    raw = attributes.get("input.value")
    if raw is None:
        raw = _pick(attributes, "gen_ai.tool.call.arguments", "tool.parameters")
    text = raw if type(raw) is str else (as_str(raw) or "")
    if text and text[0] in "{[" and _names_volatile_key(text, volatile):
        text = canonical_args(text, volatile, cap)
    return tool, text


def args_fingerprint(span: Any, volatile: frozenset[str], cap: int) -> str:
    """A stable hex fingerprint of a tool span's (name, canonical arguments), for evidence.

    Computed when a trip is reported, from the span's recorded attributes: the in-memory keys are per-process
    hashes, and evidence must read the same in every process and every replay.
    """
    name = getattr(span, "name", "")
    tool, text = _tool_arguments(name if isinstance(name, str) else "", raw_attributes(span), volatile, cap)
    return digest(f"{tool}\x1f{text}", cap)


_ARGS_WRAPPER = re.compile(r"^args (?:sanitize_inputs_outputs (?:true|false) )?kwargs ")
"""The smolagents instrumentor's envelope around tool arguments, once folded: the same for every call, so it
would only make different queries look alike."""
_WRAPPER_CHARS = 64
_QUERY_RAW_CHARS = 2 * SIMILARITY_CHARS + _WRAPPER_CHARS
"""Recorded arguments this long or longer are a script or a document, not a query (and are not kept)."""
_IGNORED_VOLATILE = frozenset({"sanitize_inputs_outputs"})
"""Constant within a tool's calls: present in every smolagents call, no reason to parse them."""


_VOLATILE_PATTERNS: dict[frozenset[str], tuple[str, ...]] = {}
"""The quoted key names to look for, per configured set (configs are few; a dict read is cheaper than a call)."""


def _names_volatile_key(text: str, volatile: frozenset[str]) -> bool:
    patterns = _VOLATILE_PATTERNS.get(volatile)
    if patterns is None:
        patterns = tuple(f'"{key}"' for key in sorted(volatile - _IGNORED_VOLATILE))
        if len(_VOLATILE_PATTERNS) < 64:
            _VOLATILE_PATTERNS[volatile] = patterns
    head = text[:4096]  # the string itself when shorter: no copy
    for pattern in patterns:  # noqa: SIM110 (a plain loop: no generator object per call)
        if pattern in head:
            return True
    return False


def fill_tool_result(call: ToolCall, attributes: Mapping[str, Any], events: Sequence[Any], status: Any,
                     cap: int, format_types: frozenset[str]) -> None:
    raw = attributes.get("output.value")  # the OpenInference key first: one lookup on the common path
    if raw is None:
        raw = attributes.get("gen_ai.tool.call.result")
    output = raw if type(raw) is str else as_str(raw)
    code = status._status_code if type(status) is Status else None
    # A clean call (no events, the SDK's status unset or OK) is decided without the call to root_error.
    error = call.error = None if not events and (code is _UNSET or code is _OK) else root_error(
        events, status, format_types)
    text = output if output is not None else ""
    if error is not None and not text:
        text = f"error:{error}"
    call.result_key = _text_key(text, cap)
    call.result_sample = text if len(text) <= _SAMPLE_CHARS else sample(text)
    call.empty = error is None and (output is None or (len(output) <= 64 and is_empty_result(output)))


_SAMPLE_CHARS = SIMILARITY_CHARS * 4
"""Results up to this long are their own sample (no copy)."""


def model_start(name: str, attributes: Mapping[str, Any], cap: int) -> ModelCall:
    value = attributes.get("llm.model_name")
    if value is None:
        value = _pick(attributes, "gen_ai.request.model", "gen_ai.response.model")
    model = value if type(value) is str else as_str(value)
    raw = attributes.get("input.value")
    if type(raw) is not str:
        return ModelCall(model, None, len(raw) if isinstance(raw, str) else 0, 0)
    history = 0
    if raw.find("from_history", 0, cap) >= 0:  # bounded scan, no copy of the prompt
        history = raw.count('"from_history": true', 0, cap) + raw.count('"from_history":true', 0, cap)
    return ModelCall(model, None, len(raw), history)  # positional: cheaper than keywords on the hot path


def fill_model_result(call: ModelCall, attributes: Mapping[str, Any]) -> None:
    # Each figure reads its OpenInference key first and falls back to the GenAI ones only when it is absent:
    # the same answer as _pick over all the keys, with one dict lookup (no call) on the common path. Counts
    # that are plain non-negative ints (the common case) are taken without a call to as_int.
    get = attributes.get
    value = get("llm.model_name")
    if value is None:
        value = _pick(attributes, "gen_ai.response.model", "gen_ai.request.model")
    if value is not None:
        call.model = (value if type(value) is str else as_str(value)) or call.model
    value = get("llm.provider")
    if value is None:
        value = _pick(attributes, "gen_ai.provider.name", "gen_ai.system", "llm.system")
    call.provider = value if type(value) is str or value is None else as_str(value)
    value = get("llm.token_count.prompt")
    if value is None:
        value = _pick(attributes, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
    prompt = call.prompt_tokens = value if type(value) is int and value >= 0 else _as_count(value)
    value = get("llm.token_count.completion")
    if value is None:
        value = _pick(attributes, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
    completion = call.completion_tokens = value if type(value) is int and value >= 0 else _as_count(value)
    value = get("llm.token_count.total")
    total = call.total_tokens = value if type(value) is int and value >= 0 else _as_count(value)
    call.tokens = total if total is not None else (prompt or 0) + (completion or 0)
    value = get("llm.cost.total")
    if value is not None:
        call.cost_usd = as_float(value)
    if call.input_chars == 0:
        raw = get("input.value")
        call.input_chars = len(raw) if isinstance(raw, str) else 0


def agent_name(name: str, attributes: Mapping[str, Any]) -> str:
    value = as_str(_pick(attributes, "agent.name", "gen_ai.agent.name", "graph.node.name"))
    if value:
        return value[:128]
    if isinstance(name, str):
        for suffix in _AGENT_NAME_SUFFIXES:
            if name.endswith(suffix):
                return name[: -len(suffix)][:128]
        if name.startswith("invoke_agent "):
            return name[len("invoke_agent "):][:128]
        return name[:128]
    return "agent"


def agent_start(name: str, attributes: Mapping[str, Any], cap: int) -> AgentRun:
    agent = agent_name(name, attributes)
    task = as_str(attributes.get("input.value")) or ""
    return AgentRun(name=agent, task_key=_text_key(task, cap),
                    session=as_str(_pick(attributes, "session.id", "gen_ai.conversation.id")))


def fill_agent_result(run: AgentRun, attributes: Mapping[str, Any], events: Sequence[Any], status: Any,
                      cap: int, format_types: frozenset[str]) -> None:
    output = as_str(attributes.get("output.value"))
    run.output_text = output[:cap] if output is not None else None
    run.output_key = _text_key(output or "", cap)
    run.error = root_error(events, status, format_types)
    run.validation_failed = attributes.get("spanbreaker.validation_failed") is True or run.error in _VALIDATION_ERRORS


# ----------------------------------------------------------------------------------------------- errors
_WRAPPER_ERRORS = frozenset(
    {"AgentExecutionError", "AgentToolExecutionError", "AgentToolCallError", "AgentGenerationError",
     "InterpreterError", "AgentError", "FrameworkError", "ToolError", "AgentRunException", "ExceptionGroup"}
)
_UNSET, _OK = StatusCode.UNSET, StatusCode.OK
_ERROR_NAME = re.compile(r"\b([A-Z][A-Za-z0-9_]*(?:Error|Exception|Exit|Interrupt))\b")
_MESSAGE_CHARS = 4096
_VALIDATION_ERRORS = frozenset({"ValidationError", "OutputCheckError", "SchemaValidationError",
                                "StructuredOutputError", "OutputValidationError"})


def root_error(events: Sequence[Any], status: Any, format_types: frozenset[str]) -> str | None:
    """The root exception class of a failed span, unwrapping framework wrappers.

    smolagents wraps a ``KeyError`` as ``AgentExecutionError`` whose message ends in ``KeyError: 'x'``; the
    root is the last non-wrapper class named in the message. Returns ``None`` for a span that did not fail.
    """
    if not events:
        # the SDK's Status: its field, not its property (a Python call)
        code = status._status_code if type(status) is Status else getattr(status, "status_code", None)
        if code is _UNSET or code is _OK:  # the SDK's codes by identity: Enum.name is a Python-level property
            return None
        if code is None or getattr(code, "name", "") != "ERROR":
            return None  # the common case, decided without the unwrapping below
    found: str | None = None
    message: str | None = None
    try:
        for event in events or ():
            if getattr(event, "name", None) != "exception":
                continue
            attributes = getattr(event, "attributes", None) or {}
            etype = as_str(attributes.get("exception.type"))
            if etype:
                found = etype.rsplit(".", 1)[-1][:128]
                message = as_str(attributes.get("exception.message"))
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
    if found is None or found in _WRAPPER_ERRORS:
        text = message or description or ""
        names: list[str] = [n for n in _ERROR_NAME.findall(text[:_MESSAGE_CHARS]) if n not in _WRAPPER_ERRORS]
        if names:
            return names[-1]
        if found is None and description:
            head = description.split(":", 1)[0].strip()
            if head.isidentifier():
                return head[:128]
    return found if found is not None else "Error"
