"""OpenLLMetry (Traceloop's instrumentations): the envelopes around a tool call's arguments and result.

**LangChain** (``opentelemetry-instrumentation-langchain``): the records on its ``execute_tool <name>`` span.

Measured on opentelemetry-instrumentation-langchain 0.62.4 with langgraph 1.2 and langchain-core 1.8 (``docs/
conformance.md``, ``tests/openllmetry``). The span is a tool call by its GenAI name; ``gen_ai.tool.call.arguments``
and ``gen_ai.tool.call.result`` (and the older ``traceloop.entity.input`` / ``...output``) carry the callback's
whole record, set while content tracing is on (``TRACELOOP_TRACE_CONTENT``, its default):

* arguments: ``{"input_str": ..., "tags": [...], "metadata": {...}, "inputs": {...}, "kwargs": {...}}``, where the
  metadata names the graph step and checkpoint and the kwargs the call's ``tool_call_id``: every call's text is
  distinct. The call is its ``inputs`` (the tool's arguments), else its ``input_str``.
* result: ``{"output": <the ToolMessage, serialised>, "kwargs": {...}}``, the message carrying the per-call
  ``tool_call_id``. The result is the message's content.

**LlamaIndex** (``opentelemetry-instrumentation-llamaindex``, 0.62.4 with llama-index-core 0.14): a tool span
(``FunctionTool.task``, a tool call by the GenAI operation spanbreaker's adapter starts it with) carries the call's
bound arguments as ``traceloop.entity.input``, ``{"kwargs": {...}}`` (and ``"args": [...]`` when positional ones were
given), and the ``ToolOutput`` as ``traceloop.entity.output`` (its ``raw_output`` read as OpenInference's record of it
is, :mod:`.llama_index`), both only while content tracing is on. The call is its keyword arguments
(:func:`llama_index_call`), as the adapter shows it in process, so a replay of the exported spans reads what the live
breaker read.

Only a document of exactly these keys is unwrapped (a tool's own JSON that happens to start the same way is read as it
is). Pure functions of plain values: no LangChain or LlamaIndex import here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .. import jsontext
from ..kinds import Kind

NAME = "openllmetry"

KEYS: dict[str, str] = {
    "cache_read_tokens": "gen_ai.usage.cache_read_input_tokens",
    "cache_write_tokens": "gen_ai.usage.cache_creation_input_tokens",
    "first_prompt": "gen_ai.prompt.0.content",
}
"""Its older names for a prompt's cached part (0.4x releases; later ones write the GenAI names). The records are read
under the GenAI keys (:mod:`.genai`), as the instrumentor sets them."""
CACHE_READ_TOKENS = KEYS["cache_read_tokens"]
CACHE_WRITE_TOKENS = KEYS["cache_write_tokens"]
FIRST_PROMPT = KEYS["first_prompt"]
"""The first message of a model call's prompt, flattened (``gen_ai.prompt.<i>.content``): which conversation the call
belongs to where no request text is on the span (``context_growth``)."""

TOOL_INPUT = '{"input_str": '
"""How the instrumentor's record of a tool call's input begins."""
TOOL_OUTPUT = '{"output": '
"""How the instrumentor's record of a tool call's output begins."""
ENTITY_INPUT = "traceloop.entity.input"
ENTITY_OUTPUT = "traceloop.entity.output"
"""Where the LlamaIndex instrumentor records a call's bound arguments and its result (its LangChain one, too, beside
the GenAI keys, which are read first)."""
_INPUT_KEYS = frozenset({"input_str", "tags", "metadata", "inputs", "kwargs"})
_BOUND_KEYS = frozenset({"args", "kwargs"})
_OUTPUT_KEYS = frozenset({"output", "kwargs"})
ENVELOPE_CHARS = 1 << 20
"""Records longer than this are not parsed (the readers cut what they keep anyway)."""


REQUEST_TYPE = "llm.request.type"
"""OpenLLMetry's older instrumentations (Ollama, Mistral AI, Cohere, Vertex AI, Bedrock's and others' earlier releases)
start a model call's span with only this and ``gen_ai.system``: ``chat`` or ``completion`` for a model call (also
``embedding``, ``rerank``, ``unknown``)."""
MODEL_CALLS = frozenset({"chat", "completion"})


SPAN_KIND = "traceloop.span.kind"
ENTITY_NAME = "traceloop.entity.name"
"""The Traceloop SDK's decorators (``@tool``, ``@agent``, ``@workflow``, ``@task``) say what a span is, and its name,
under these keys; its instrumentations set them on some of their own spans too."""
TRACELOOP_TOOL = "tool"
TRACELOOP_KINDS: dict[str, Kind] = {TRACELOOP_TOOL: Kind.TOOL, "agent": Kind.AGENT}
"""A decorated tool is a tool call, a decorated agent an agent run; a workflow or a task is anything (no call)."""


def kind(name: str, attributes: Mapping[str, Any]) -> Kind | None:
    """A model call by ``llm.request.type`` (the spans of its newer instrumentations say their kind by their GenAI
    operation, read first: :mod:`.genai`); a tool call or agent run by the Traceloop SDK's ``traceloop.span.kind``."""
    value = attributes.get(REQUEST_TYPE)
    if type(value) is str and value in MODEL_CALLS:
        return Kind.LLM
    value = attributes.get(SPAN_KIND)
    return TRACELOOP_KINDS.get(value) if type(value) is str else None


def _document(text: str, keys: frozenset[str], required: str) -> dict[str, Any] | None:
    if len(text) > ENVELOPE_CHARS:
        return None
    try:
        document = jsontext.loads(text)
    except (ValueError, TypeError):
        return None
    if not isinstance(document, dict) or required not in document or not document.keys() <= keys:
        return None
    return document


def as_text(value: Any) -> str:
    """A value as the breaker compares it: text as it is, anything else as JSON with sorted keys."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def call_text(input_str: Any, inputs: Any) -> str:
    """A LangChain tool call as the breaker keys it: its ``inputs`` (the tool's arguments, JSON), else its
    ``input_str``. The same from the record on the span (:func:`tool_arguments`) and from the callback itself (the
    OpenLLMetry LangChain adapter, which shows it as the span starts)."""
    if isinstance(inputs, dict) and inputs:
        return as_text(inputs)
    return as_text(input_str)


def tool_arguments(text: str) -> str | None:
    """The call in the instrumentor's input record (:func:`call_text`); None when ``text`` is no such record."""
    document = _document(text, _INPUT_KEYS, "input_str")
    return None if document is None else call_text(document["input_str"], document.get("inputs"))


def result_text(output: Any) -> str:
    """A tool's output as the breaker compares it: a ``ToolMessage``'s content (text as it is, anything else as
    JSON), whether serialised (a record's ``{"lc": 1, ..., "kwargs": {"content": ...}}``) or the object itself."""
    if isinstance(output, dict) and output.get("lc") == 1:
        kwargs = output.get("kwargs")
        if isinstance(kwargs, dict) and "content" in kwargs:
            return as_text(kwargs["content"])
    elif not isinstance(output, str | dict | list) and hasattr(output, "content"):  # the message object
        return as_text(output.content)
    return as_text(output)


def tool_result(text: str) -> str | None:
    """The result in the instrumentor's output record (:func:`result_text` of its output); None when ``text`` is no
    such record."""
    document = _document(text, _OUTPUT_KEYS, "output")
    return None if document is None else result_text(document["output"])


def llama_index_call(args: Any, kwargs: Any) -> str:
    """A LlamaIndex tool call as the breaker keys it: its keyword arguments, with its positional ones only when it
    had any. The same from the record on the span (:func:`llama_index_arguments`) and from the call itself (the
    OpenLLMetry LlamaIndex adapter, which shows it as the span starts)."""
    kwargs = kwargs if isinstance(kwargs, dict) else {}
    return as_text({"args": list(args), "kwargs": kwargs} if args else kwargs)


def llama_index_arguments(text: str) -> str | None:
    """The call in the LlamaIndex instrumentor's record of a tool's bound arguments (:func:`llama_index_call`); None
    when ``text`` is no such record."""
    document = _document(text, _BOUND_KEYS, "kwargs")
    if document is None or not isinstance(document["kwargs"], dict):
        return None
    args = document.get("args") or ()
    return llama_index_call(args if isinstance(args, list) else (), document["kwargs"])
