"""LangChain / LangGraph: what the OpenInference LangChain instrumentor's spans say, and when.

Measured on openinference-instrumentation-langchain 0.1.80 with langgraph 1.2 / langchain-core 1.7
(``docs/conformance.md``, pinned by ``tests/langgraph/test_conformance.py``):

* The instrumentor writes OpenInference keys, but only when a run ends: at start its spans carry nothing, so the
  breaker could neither tell a tool call from a chain nor compare arguments. The LangChain adapter
  (``adapters/langchain.py``) gives each span, at start, the attributes this module derives from the LangChain
  run (:func:`start_attributes`): the kind by the instrumentor's own rule, the tool's name, the input. From there
  on the span reads as plain OpenInference, so this convention adds no kind rule of its own and is not in the
  kind order (:data:`spanbreaker.conventions.CONVENTIONS`).
* A tool's result comes back wrapped: ``output.value`` is the serialised ``ToolMessage``,
  ``{"type": "tool", "data": {"content": ..., "tool_call_id": "call_7", ...}}``, whose per-call
  ``tool_call_id`` makes every result distinct. :func:`tool_result` unwraps the content, so a tool returning the
  same text twice is seen returning the same result.

Pure functions of plain values: no LangChain import here.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from .. import jsontext
from ..kinds import Kind
from . import openinference as oi

NAME = "langchain"

KEYS: dict[str, str] = {
    "kind": oi.SPAN_KIND,
    "tool_name": oi.TOOL_NAME,
    "input": oi.INPUT,
    "output": oi.OUTPUT,
}
"""OpenInference keys: the instrumentor writes them at the end, the adapter the start ones at start."""

RUN_KINDS = {"llm": "LLM", "chain": "CHAIN", "tool": "TOOL", "retriever": "RETRIEVER", "embedding": "EMBEDDING"}
"""LangChain run types -> OpenInference span kind, as the instrumentor maps them (anything else is CHAIN)."""
GATED = frozenset({"TOOL", "LLM", "AGENT"})
"""Kinds whose input is stamped at start: a breaker decides on those before the call runs."""
INPUT_CHARS = 1 << 20
"""Inputs serialised at start are cut here (the readers take bounded text anyway)."""

TOOL_MESSAGE = '{"type": "tool", "data": {'
"""How the instrumentor's JSON of a ``ToolMessage`` begins (``output.value`` of a tool run inside LangGraph)."""
_PER_CALL = re.compile(r'"(?:tool_call_id|id)": (?:"(?:[^"\\]|\\.)*"|null), ?')
"""The per-call fields of a ToolMessage, for an envelope too long to parse."""


def kind(name: str, attributes: Mapping[str, Any]) -> Kind | None:
    """No rule of its own: once stamped, a LangChain span says its kind in OpenInference terms."""
    return None


def span_kind(run_type: Any, name: Any) -> str:
    """The OpenInference kind the instrumentor gives a run when it ends: AGENT when the run's name says ``agent``
    (LangGraph's ``agent`` node), else its run type's."""
    if isinstance(name, str) and "agent" in name.lower():
        return "AGENT"
    return RUN_KINDS.get(run_type.lower(), "CHAIN") if isinstance(run_type, str) else "CHAIN"


def input_text(inputs: Any) -> str | None:
    """A run's inputs as the instrumentor records them: a lone string as it is, anything else as JSON."""
    if not inputs:
        return None
    if isinstance(inputs, Mapping) and len(inputs) == 1:
        value = next(iter(inputs.values()))
        if isinstance(value, str):
            return value[:INPUT_CHARS]
    try:
        text = json.dumps(inputs, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        text = str(inputs)
    return text[:INPUT_CHARS]


def start_attributes(run_type: Any, name: Any, inputs: Any, serialized: Any = None) -> dict[str, str]:
    """The attributes a LangChain run's span gets at start: its kind, and what a breaker checks before the call
    (a tool's name and arguments, a model's or agent's input). Chains get their kind only: their input is the
    whole graph state, and nothing is decided on it."""
    span = span_kind(run_type, name)
    attributes = {oi.SPAN_KIND: span}
    if span == "TOOL":
        tool = serialized.get("name") if isinstance(serialized, Mapping) else None
        attributes[oi.TOOL_NAME] = tool if isinstance(tool, str) and tool else str(name)
    if span in GATED:
        text = input_text(inputs)
        if text is not None:
            attributes[oi.INPUT] = text
    return attributes


TOOL_MESSAGE_REPR = "content="
"""How a ``ToolMessage`` reads as its ``str()`` (``content='...' name='search' tool_call_id='call_1'``): OpenLIT's
LangGraph instrumentation records a tool run's result so."""
_REPR_CONTENT = re.compile(r"""content=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")(?= )""", re.S)
_REPR_CALL_ID = re.compile(r" tool_call_id='[^']*'")


def repr_tool_result(text: str, cap: int) -> str | None:
    """The content of a ``ToolMessage`` recorded as its ``str()``, or None when ``text`` is not one (a message whose
    content is not text is read as it is). The message's ``tool_call_id`` is new on every call: left in, no two
    results would read alike. Past ``cap`` characters the text is not parsed; the id is cut out instead."""
    if " tool_call_id=" not in text:
        return None
    if len(text) > cap:
        return _REPR_CALL_ID.sub("", text)
    match = _REPR_CONTENT.match(text)
    if match is None:
        return None
    try:
        content = ast.literal_eval(match.group(1))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return content if isinstance(content, str) else None


def tool_result(text: str, cap: int) -> str:
    """A tool result with its ``ToolMessage`` envelope taken off: the content (text as it is, anything else as
    JSON). An envelope longer than ``cap`` is not parsed; its per-call ids are cut out instead."""
    if len(text) > cap:
        return _PER_CALL.sub("", text)
    try:
        data = jsontext.loads(text).get("data")
        content = data["content"]
    except (ValueError, TypeError, KeyError, AttributeError):
        return text
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, sort_keys=True)
