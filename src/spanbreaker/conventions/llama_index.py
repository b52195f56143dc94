"""LlamaIndex: what the OpenInference LlamaIndex instrumentor's spans say, and when.

Measured on openinference-instrumentation-llama-index 4.6 with llama-index-core 0.14 (``docs/conformance.md``,
pinned by ``tests/llama_index/test_conformance.py``):

* The instrumentor is a span handler of LlamaIndex's instrumentation dispatcher. It starts each span with no
  attributes and writes the kind, the tool name, the arguments and the token counts only when the span ends, so
  the breaker saw anonymous spans: a looping ``FunctionAgent`` ran to ``max_iterations`` unseen. The LlamaIndex
  adapter (``adapters/llama_index.py``) gives tool and model-call spans, at start, the attributes the
  instrumentor itself computes for them (it runs the instrumentor's own input processing early). From there on
  the spans read as plain OpenInference, so this convention adds no kind rule and is not in the kind order.
* Which spans are calls: every span of a tool (``FunctionTool.acall``); of a model, only the calls that reach it
  (:data:`MODEL_CALLS`) and only the outermost when one wraps another (a mock's ``achat`` calling ``chat``).
  ``_prepare_chat_with_tools`` and friends are model methods too, but they send nothing.
* A tool's result comes back wrapped: ``output.value`` is the ``ToolOutput`` as JSON,
  ``{"blocks": [...], "tool_name": ..., "raw_input": {<the arguments>}, "raw_output": ..., "is_error": ...}``.
  The arguments inside make every call's result distinct from another call's; :func:`tool_result` takes the
  ``raw_output``, so two different queries returning one text are seen returning the same result.

Pure functions of plain values: no LlamaIndex import here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .. import jsontext
from ..kinds import Kind

NAME = "llama_index"

KEYS: dict[str, str] = {}
"""No keys of its own: the instrumentor writes OpenInference keys."""

MODEL_CALLS = frozenset({"chat", "achat", "stream_chat", "astream_chat", "complete", "acomplete",
                         "stream_complete", "astream_complete"})
"""The methods of a LlamaIndex LLM that send a request (the span name is ``<Class>.<method>``)."""

TOOL_OUTPUT = '{"blocks":'
"""How the instrumentor's JSON of a ``ToolOutput`` begins (``model_dump_json``: no spaces)."""
_RAW_OUTPUT = '"raw_output":'
_IS_ERROR = ',"is_error":'


def kind(name: str, attributes: Mapping[str, Any]) -> Kind | None:
    """No rule of its own: once stamped, a LlamaIndex span says its kind in OpenInference terms."""
    return None


def method_of(span_name: str) -> str:
    """``FunctionTool.acall`` -> ``acall``."""
    return span_name.rpartition(".")[2]


def is_tool_output(text: str) -> bool:
    return text.startswith(TOOL_OUTPUT) and _RAW_OUTPUT in text


def tool_result(text: str, cap: int) -> str:
    """A tool result with its ``ToolOutput`` envelope taken off: ``raw_output`` (text as it is, anything else as
    JSON). An envelope longer than ``cap`` is not parsed: the JSON text of ``raw_output`` is cut out of it."""
    if len(text) > cap:
        start = text.find(_RAW_OUTPUT)
        end = text.rfind(_IS_ERROR)
        return text[start + len(_RAW_OUTPUT): end] if 0 <= start < end else text
    try:
        data = jsontext.loads(text)
        value = data["raw_output"]
    except (ValueError, TypeError, KeyError):
        return text
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
