"""The OpenTelemetry semantic conventions: GenAI (``gen_ai.*``) and the general exception event.

What the breaker reads from a span written in GenAI names, and when (``docs/conformance.md`` has the measured
instrumentors):

* tool calls (``execute_tool``): ``gen_ai.tool.name``; ``gen_ai.tool.call.arguments`` and
  ``gen_ai.tool.call.result`` are opt-in (content capture), so either may be missing altogether, or set only
  when the span ends. Missing is "unknown", never "empty": such a call is not compared as identical to another.
* inference (``chat``, ...): ``gen_ai.input.messages`` (a JSON array of ``{"role", "parts"}``) is the prompt the
  size checks estimate from, ``gen_ai.system_instructions`` beside it; ``gen_ai.usage.input_tokens`` /
  ``output_tokens`` the reported usage (the input's cached part, ``gen_ai.usage.cache_read.input_tokens`` /
  ``cache_creation.input_tokens``, priced at the cache's rates); models and provider.
* agents (``invoke_agent``): ``gen_ai.agent.name``, ``gen_ai.conversation.id`` (the session), the agent's input
  and output as ``gen_ai.input.messages`` / ``gen_ai.output.messages``.

Read after OpenInference, figure by figure: a span that carries both (an OpenInference instrumentor that also
writes GenAI names) gives the OpenInference value. Covers what the readers use today; a span written only in
GenAI names (``invoke_agent``, ``execute_tool``, ``chat``) is classified and read here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..kinds import Kind

NAME = "genai"

KEYS: dict[str, str] = {
    "operation": "gen_ai.operation.name",
    "tool_name": "gen_ai.tool.name",
    "tool_arguments": "gen_ai.tool.call.arguments",
    "tool_result": "gen_ai.tool.call.result",
    "request_model": "gen_ai.request.model",
    "response_model": "gen_ai.response.model",
    "provider": "gen_ai.provider.name",
    "system": "gen_ai.system",
    "input_tokens": "gen_ai.usage.input_tokens",
    "prompt_tokens": "gen_ai.usage.prompt_tokens",
    "output_tokens": "gen_ai.usage.output_tokens",
    "completion_tokens": "gen_ai.usage.completion_tokens",
    "cache_read_tokens": "gen_ai.usage.cache_read.input_tokens",
    "cache_write_tokens": "gen_ai.usage.cache_creation.input_tokens",
    "agent_name": "gen_ai.agent.name",
    "input_messages": "gen_ai.input.messages",
    "output_messages": "gen_ai.output.messages",
    "conversation": "gen_ai.conversation.id",
    "exception_type": "exception.type",
    "exception_message": "exception.message",
    "exception_stacktrace": "exception.stacktrace",
}
OPERATION = KEYS["operation"]
TOOL_NAME = KEYS["tool_name"]
TOOL_ARGUMENTS = KEYS["tool_arguments"]
TOOL_RESULT = KEYS["tool_result"]
REQUEST_MODEL = KEYS["request_model"]
RESPONSE_MODEL = KEYS["response_model"]
PROVIDER = KEYS["provider"]
SYSTEM = KEYS["system"]
INPUT_TOKENS = KEYS["input_tokens"]
PROMPT_TOKENS = KEYS["prompt_tokens"]
OUTPUT_TOKENS = KEYS["output_tokens"]
COMPLETION_TOKENS = KEYS["completion_tokens"]
CACHE_READ_TOKENS = KEYS["cache_read_tokens"]
CACHE_WRITE_TOKENS = KEYS["cache_write_tokens"]
AGENT_NAME = KEYS["agent_name"]
CONVERSATION = KEYS["conversation"]
INPUT_MESSAGES = KEYS["input_messages"]
OUTPUT_MESSAGES = KEYS["output_messages"]
EXCEPTION_TYPE = KEYS["exception_type"]
EXCEPTION_MESSAGE = KEYS["exception_message"]
EXCEPTION_STACKTRACE = KEYS["exception_stacktrace"]
EXCEPTION_EVENT = "exception"
"""The span event an exception is recorded as (``Span.record_exception``)."""

KINDS = {
    "invoke_agent": Kind.AGENT, "create_agent": Kind.AGENT, "invoke_workflow": Kind.OTHER,
    "execute_tool": Kind.TOOL, "chat": Kind.LLM, "text_completion": Kind.LLM, "generate_content": Kind.LLM,
}
"""``gen_ai.operation.name`` values -> kind. A workflow (``invoke_workflow``: Google ADK's and OpenLIT's runs, OpenLIT's
CrewAI agent executor) holds a whole run, so it is no step (read as one, OpenLIT's CrewAI executor made every call of
its agent one model turn, and a loop of identical calls never counted past one; a tool call under OpenLIT's LangGraph
workflow had its error kept for the step's end, the run's): a span that only encloses."""
AGENT_SPAN_PREFIX = "invoke_agent "
TOOL_SPAN_PREFIX = "execute_tool "
"""Span names the conventions prescribe (``{operation} {name}``, ``{operation} {model}`` for inference), read for
spans whose attributes are not on them yet when they start: Strands Agents sets them just after, Google ADK
names its model calls ``generate_content {model}`` and sets nothing until they end."""


_AGENT_STEP = re.compile(r"invoke_agent .+ (?:step_\d+|planning)\Z")
"""OpenLIT's smolagents instrumentation names each step of an agent's run ``invoke_agent {agent} step_{n}`` (a planning
step ``invoke_agent {agent} planning``) and marks it ``invoke_agent``: a step of that agent, not an agent of its own
(read as one, each step was an agent scope of its own and no loop across steps was seen)."""


def kind(name: str, attributes: Mapping[str, Any]) -> Kind | None:
    """The kind from ``gen_ai.operation.name``."""
    value = attributes.get(OPERATION)
    if not isinstance(value, str):
        return None
    found = KINDS.get(value)
    if found is Kind.AGENT and (is_agent_step(name) or (name == _UNNAMED_AGENT and not attributes.get(AGENT_NAME))):
        return Kind.CHAIN
    return found


def kind_by_name(name: str) -> Kind | None:
    """The kind from the span name the conventions prescribe: its first word is the operation."""
    if not isinstance(name, str):
        return None
    found = KINDS.get(name.partition(" ")[0])
    return Kind.CHAIN if found is Kind.AGENT and (name == _UNNAMED_AGENT or is_agent_step(name)) else found


def is_agent_step(name: str) -> bool:
    """A span named as one step of an agent's run (:data:`_AGENT_STEP`)."""
    return isinstance(name, str) and (name.endswith(" planning") or " step_" in name) and (
        _AGENT_STEP.match(name) is not None)


_UNNAMED_AGENT = "invoke_agent"
"""An ``invoke_agent`` span that names no agent (OpenLIT's OpenAI Agents SDK processor wraps the run and each of its
turns in one): a part of whatever agent encloses it, not an agent of its own. Read as an agent called
"invoke_agent", the turns of one agent made a delegation chain invoke_agent -> researcher -> invoke_agent, and
``delegation_cycle`` stopped a healthy run at its first turn."""


ROLE_MARKERS = ('"role":', '"role" :')
SYSTEM_MARKERS = ('"role":"system"', '"role": "system"')


def history_messages(raw: str, cap: int) -> int:
    """Messages in ``gen_ai.input.messages`` before the newest one, system instructions aside: what a first model
    call of a run carries over from earlier turns (a reused conversation). Counted within ``cap`` characters,
    without parsing the JSON."""
    total = raw.count(ROLE_MARKERS[0], 0, cap) + raw.count(ROLE_MARKERS[1], 0, cap)
    system = raw.count(SYSTEM_MARKERS[0], 0, cap) + raw.count(SYSTEM_MARKERS[1], 0, cap)
    return max(0, total - system - 1)


def named(name: str, prefix: str) -> str | None:
    """The agent or tool name of a span named ``{operation} {name}``, else None."""
    return name[len(prefix):] if isinstance(name, str) and name.startswith(prefix) else None
