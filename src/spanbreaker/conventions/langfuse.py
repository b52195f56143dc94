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
KINDS: dict[str, Kind] = {TOOL: Kind.TOOL, "agent": Kind.AGENT, "generation": Kind.LLM}
"""A tool observation is a tool call, an agent an agent run, a generation a model call; the other types are no call (an
embedding is not a turn of the agent)."""
USAGE_CHARS = 4096
"""Usage records longer than this are not parsed (a real one is a few keys)."""


def kind(name: str, attributes: Mapping[str, Any]) -> Kind | None:
    value = attributes.get(TYPE)
    return KINDS.get(value) if type(value) is str else None


def usage(attributes: Mapping[str, Any]) -> tuple[int | None, int | None, int | None]:
    """A generation's (input, output, total) tokens from its usage record (``{"input": 120, "output": 20, "total":
    140}``, also OpenAI's own names); Nones when it has none or it cannot be read."""
    raw = attributes.get(USAGE)
    if type(raw) is not str or len(raw) > USAGE_CHARS:
        return None, None, None
    try:
        record = json.loads(raw)
    except ValueError:
        return None, None, None
    if not isinstance(record, dict):
        return None, None, None

    def count(*keys: str) -> int | None:
        for key in keys:
            value = record.get(key)
            if type(value) is int and value >= 0:
                return value
        return None

    return count("input", "prompt_tokens"), count("output", "completion_tokens"), count("total", "total_tokens")
