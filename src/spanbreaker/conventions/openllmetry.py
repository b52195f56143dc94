"""OpenLLMetry (Traceloop's ``opentelemetry-instrumentation-langchain``): the envelopes around a LangChain tool call's
arguments and result on its ``execute_tool <name>`` span.

Measured on opentelemetry-instrumentation-langchain 0.62.4 with langgraph 1.2 and langchain-core 1.8 (``docs/
conformance.md``, ``tests/openllmetry``). The span is a tool call by its GenAI name; ``gen_ai.tool.call.arguments``
and ``gen_ai.tool.call.result`` (and the older ``traceloop.entity.input`` / ``...output``) carry the callback's
whole record, set while content tracing is on (``TRACELOOP_TRACE_CONTENT``, its default):

* arguments: ``{"input_str": ..., "tags": [...], "metadata": {...}, "inputs": {...}, "kwargs": {...}}``, where the
  metadata names the graph step and checkpoint and the kwargs the call's ``tool_call_id``: every call's text is
  distinct. The call is its ``inputs`` (the tool's arguments), else its ``input_str``.
* result: ``{"output": <the ToolMessage, serialised>, "kwargs": {...}}``, the message carrying the per-call
  ``tool_call_id``. The result is the message's content.

Only a document of exactly these keys is unwrapped (a tool's own JSON that happens to start the same way is read as it
is). Pure functions of plain values: no LangChain import here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .. import jsontext
from ..kinds import Kind

NAME = "openllmetry"

KEYS: dict[str, str] = {}
"""None of its own: the records are read under the GenAI keys (:mod:`.genai`), as the instrumentor sets them."""

TOOL_INPUT = '{"input_str": '
"""How the instrumentor's record of a tool call's input begins."""
TOOL_OUTPUT = '{"output": '
"""How the instrumentor's record of a tool call's output begins."""
_INPUT_KEYS = frozenset({"input_str", "tags", "metadata", "inputs", "kwargs"})
_OUTPUT_KEYS = frozenset({"output", "kwargs"})
ENVELOPE_CHARS = 1 << 20
"""Records longer than this are not parsed (the readers cut what they keep anyway)."""


def kind(name: str, attributes: Mapping[str, Any]) -> Kind | None:
    """No rule of its own: the spans say their kind by their GenAI names (``execute_tool <name>``)."""
    return None


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


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def call_text(input_str: Any, inputs: Any) -> str:
    """A LangChain tool call as the breaker keys it: its ``inputs`` (the tool's arguments, JSON), else its
    ``input_str``. The same from the record on the span (:func:`tool_arguments`) and from the callback itself (the
    OpenLLMetry LangChain adapter, which shows it as the span starts)."""
    if isinstance(inputs, dict) and inputs:
        return _text(inputs)
    return _text(input_str)


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
            return _text(kwargs["content"])
    elif not isinstance(output, str | dict | list) and hasattr(output, "content"):  # the message object
        return _text(output.content)
    return _text(output)


def tool_result(text: str) -> str | None:
    """The result in the instrumentor's output record (:func:`result_text` of its output); None when ``text`` is no
    such record."""
    document = _document(text, _OUTPUT_KEYS, "output")
    return None if document is None else result_text(document["output"])
