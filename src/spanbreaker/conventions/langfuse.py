"""Langfuse's OpenTelemetry spans (the Langfuse Python SDK 3 and later: ``@observe``, ``start_as_current_observation``,
``start_observation``, its OpenAI integration): what an observation is, and where its input and output are.

Measured on langfuse 5.0.4. Every observation is a span carrying ``langfuse.observation.type`` (``span``, ``agent``,
``tool``, ``chain``, ``retriever``, ``generation``, ``embedding``, ``evaluator``, ``guardrail``, ``event``), its input
and output as JSON texts (``langfuse.observation.input`` / ``.output``; ``@observe`` records a function's call as
``{"args": [...], "kwargs": {...}}``, as the Traceloop SDK does), a generation's model and usage. The SDK sets them
just after the span starts (and the output before it ends): :mod:`spanbreaker.adapters.langfuse` starts the span with
its type and shows a tool call's input to the breaker in process. An export carries them all.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..kinds import Kind

NAME = "langfuse"

KEYS: dict[str, str] = {
    "type": "langfuse.observation.type",
    "input": "langfuse.observation.input",
    "output": "langfuse.observation.output",
    "model": "langfuse.observation.model.name",
    "usage": "langfuse.observation.usage_details",
}
TYPE = KEYS["type"]
INPUT = KEYS["input"]
OUTPUT = KEYS["output"]
MODEL = KEYS["model"]
USAGE = KEYS["usage"]

TOOL = "tool"
GENERATION = "generation"
KINDS: dict[str, Kind] = {TOOL: Kind.TOOL, "agent": Kind.AGENT, GENERATION: Kind.LLM}
"""A tool observation is a tool call, an agent an agent run, a generation a model call; the other types are no call (an
embedding is not a turn of the agent)."""
USAGE_CHARS = 4096
"""Usage records longer than this are not parsed (a real one is a few keys)."""


def kind(name: str, attributes: Mapping[str, Any]) -> Kind | None:
    value = attributes.get(TYPE)
    return KINDS.get(value) if type(value) is str else None


def generation_input(attributes: Mapping[str, Any]) -> Any:
    """A generation's input, else None: its request as Langfuse records it (its OpenAI integration: the request body,
    ``{"messages": [...], "tools": [...]}``), the prompt a loop around the model client is read from."""
    return attributes.get(INPUT) if attributes.get(TYPE) == GENERATION else None


def usage(attributes: Mapping[str, Any]) -> tuple[int | None, int | None, int | None, int]:
    """A generation's (input, output, total, cache read) tokens from its usage record (``{"input": 120, "output": 20,
    "total": 140}``, also OpenAI's own names, its ``prompt_tokens_details.cached_tokens`` the input's cached part);
    Nones (and 0) when it has none or it cannot be read."""
    raw = attributes.get(USAGE)
    if type(raw) is not str or len(raw) > USAGE_CHARS:
        return None, None, None, 0
    try:
        record = json.loads(raw)
    except ValueError:
        return None, None, None, 0
    if not isinstance(record, dict):
        return None, None, None, 0

    def count(within: dict[str, Any], *keys: str) -> int | None:
        for key in keys:
            value = within.get(key)
            if type(value) is int and value >= 0:
                return value
        return None

    details = record.get("prompt_tokens_details")
    cached = count(details, "cached_tokens") if isinstance(details, dict) else None
    if cached is None:
        cached = count(record, "input_cached_tokens", "cache_read_input_tokens")
    return (count(record, "input", "prompt_tokens"), count(record, "output", "completion_tokens"),
            count(record, "total", "total_tokens"), cached or 0)
