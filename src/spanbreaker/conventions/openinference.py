"""OpenInference (Arize): the attributes its instrumentors write (smolagents, Agno, BeeAI, LangChain, ...).

The kind attribute decides the span's kind for every span these instrumentors make; the engine reads it first,
inline (see ``BreakerEngine.start``), since it answers on nearly every span.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..kinds import Kind

NAME = "openinference"

KEYS: dict[str, str] = {
    "kind": "openinference.span.kind",
    "input": "input.value",
    "output": "output.value",
    "tool_name": "tool.name",
    "tool_parameters": "tool.parameters",
    "model": "llm.model_name",
    "provider": "llm.provider",
    "system": "llm.system",
    "prompt_tokens": "llm.token_count.prompt",
    "completion_tokens": "llm.token_count.completion",
    "total_tokens": "llm.token_count.total",
    "cache_read_tokens": "llm.token_count.prompt_details.cache_read",
    "cache_write_tokens": "llm.token_count.prompt_details.cache_write",
    "cost_total": "llm.cost.total",
    "agent_name": "agent.name",
    "graph_node": "graph.node.name",
    "session": "session.id",
}
# One module constant per key: the readers run per span, and a constant is read without a dict lookup.
SPAN_KIND = KEYS["kind"]
INPUT = KEYS["input"]
OUTPUT = KEYS["output"]
TOOL_NAME = KEYS["tool_name"]
TOOL_PARAMETERS = KEYS["tool_parameters"]
MODEL = KEYS["model"]
PROVIDER = KEYS["provider"]
SYSTEM = KEYS["system"]
PROMPT_TOKENS = KEYS["prompt_tokens"]
COMPLETION_TOKENS = KEYS["completion_tokens"]
TOTAL_TOKENS = KEYS["total_tokens"]
CACHE_READ_TOKENS = KEYS["cache_read_tokens"]
CACHE_WRITE_TOKENS = KEYS["cache_write_tokens"]
COST_TOTAL = KEYS["cost_total"]
AGENT_NAME = KEYS["agent_name"]
GRAPH_NODE = KEYS["graph_node"]
SESSION = KEYS["session"]

REDACTED = "__REDACTED__"
"""What an OpenInference instrumentor writes instead of a value its ``TraceConfig`` hides (``hide_inputs``,
``hide_outputs``, ``OPENINFERENCE_HIDE_*``). A redacted value is unknown, not identical: every redacted call would
otherwise read as a repeat of every other (six different fetches with six different pages tripping
``tool_repeat``). Readers treat it as absent (``conventions.read.unredacted``, with the other instrumentors'
markers)."""


KINDS = {"AGENT": Kind.AGENT, "CHAIN": Kind.CHAIN, "LLM": Kind.LLM, "TOOL": Kind.TOOL}
"""The span kind values the breaker acts on (RETRIEVER, EMBEDDING, ... are OTHER)."""


def kind(name: str, attributes: Mapping[str, Any]) -> Kind | None:
    value = attributes.get(SPAN_KIND)
    if isinstance(value, str):
        return KINDS.get(value) or KINDS.get(value.upper())
    return None
