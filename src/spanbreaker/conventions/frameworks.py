"""Framework quirks: what smolagents, Agno and BeeAI spans say only by their names, envelopes and wrappers.

Kept apart from the conventions proper because they are habits of particular instrumentors, measured on their
spans (see ``reference/`` in the shared material), not written down anywhere:

* span names: the smolagents instrumentor names its steps ``Step N`` and its agents ``CodeAgent.run``; Agno's
  LLM spans are ``OpenAIChat.invoke`` and lose their kind attribute under the SDK's 128-attribute limit.
* tool argument envelopes: smolagents records ``{"args": [], "sanitize_inputs_outputs": true, "kwargs": ...}``.
* wrapper errors: smolagents wraps a ``KeyError`` as ``AgentExecutionError`` whose message names the root.
* Agno marks the history it re-sends (``"from_history": true``); the Agno adapter marks failed validations.
* pydantic-ai's deprecated span formats keep tool arguments and results under ``tool_arguments`` /
  ``tool_response``, and its agent span the run's output under ``final_result``.
* Google ADK names a span ``execute_tool (merged)`` that is no tool call; Strands Agents redacts as ``[REDACTED]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..kinds import Kind
from . import genai

NAME = "frameworks"

KEYS: dict[str, str] = {
    "validation_failed": "spanbreaker.validation_failed",
    "legacy_tool_arguments": "tool_arguments",
    "legacy_tool_result": "tool_response",
    "final_result": "final_result",
}
VALIDATION_FAILED = KEYS["validation_failed"]
"""Set ``true`` by the Agno adapter on an agent span whose structured output failed validation."""
LEGACY_TOOL_ARGUMENTS = KEYS["legacy_tool_arguments"]
LEGACY_TOOL_RESULT = KEYS["legacy_tool_result"]
"""pydantic-ai's tool spans in its deprecated data formats (``version=2``, 3, 4): the arguments and result under
these keys instead of the GenAI ones."""
FINAL_RESULT = KEYS["final_result"]
"""pydantic-ai's agent span: the run's output."""
REDACTED = "[REDACTED]"
"""What Strands Agents writes in place of a GenAI attribute it redacts (``gen_ai.tool.call.arguments``,
``gen_ai.tool.call.result``, messages): unknown, as OpenInference's ``__REDACTED__`` is."""

LLM_NAME_SUFFIXES = (".invoke", ".ainvoke", ".invoke_stream", ".ainvoke_stream", ".generate", ".generate_stream",
                     ".create", ".acreate")
AGENT_NAME_SUFFIXES = (".run", ".arun")
STEP_PREFIX = "Step "
NOT_CALLS = frozenset({"execute_tool (merged)"})
"""Span names that read as a call by the GenAI conventions' naming but stand for none: Google ADK's ``execute_tool
(merged)`` follows a model turn's parallel tool calls and merges their responses, with no arguments of its own. As a
tool call it was unknown, so it counted as a change after every parallel turn and identical parallel calls never
added up. Decided before any attribute is read (:func:`spanbreaker.conventions.classify`): the span carries
``gen_ai.operation.name = execute_tool`` by the time it ends, so a recorded trace would read it as a call."""

WRAPPER_ERRORS = frozenset(
    {"AgentExecutionError", "AgentToolExecutionError", "AgentToolCallError", "AgentGenerationError",
     "InterpreterError", "AgentError", "FrameworkError", "ToolError", "AgentRunException", "ExceptionGroup"}
)
"""Exception classes that wrap the real failure; the root is named in their message."""
ADAPTER_ERRORS = frozenset({"ToolCallLimitExceeded"})
"""Error classes spanbreaker's own adapters write in a status description (Agno's refused calls): no class
exists for them, and they are ours, not the app's text."""
VALIDATION_ERRORS = frozenset({"ValidationError", "OutputCheckError", "SchemaValidationError",
                               "StructuredOutputError", "OutputValidationError"})

ARGS_ENVELOPE = re.compile(r"^args (?:sanitize_inputs_outputs (?:true|false) )?kwargs ")
"""The smolagents instrumentor's envelope around tool arguments, once folded: the same for every call, so it
would only make different queries look alike."""
ENVELOPE_CHARS = 64
"""Room the envelope takes in recorded arguments."""
ENVELOPE_KEYS = frozenset({"sanitize_inputs_outputs"})
"""Constant within a tool's calls: present in every smolagents call, no reason to parse arguments for them."""

HISTORY_MARKER = "from_history"
HISTORY_MESSAGE = ('"from_history": true', '"from_history":true')
"""How Agno marks a message it re-sent from the session history, in the LLM input."""


LOGFIRE_TYPE = "logfire.span_type"
RECORDS = frozenset({"log", "pending_span"})
"""Pydantic Logfire's records that are no call of their own, whatever GenAI keys they repeat: a streamed model call's
response, logged once the stream ends (with the request's ``gen_ai.operation.name``), and a pending span's
placeholder. Read as calls, every streamed model call would count twice."""
LOGFIRE_LOG = "log"
"""The record that carries a streamed model call's usage (the call's own span ends without it): counted toward the
trace's token and cost budgets, as no call (:func:`logged_usage`)."""


LOGFIRE_REQUEST = "request_data"
"""Pydantic Logfire's first message format (``instrument_openai(version=1)``): the request body, as a JSON text, where
the later formats record ``gen_ai.input.messages``."""


def logfire_request(attributes: Mapping[str, Any]) -> Any:
    """The request body a Pydantic Logfire span records (its first format), else None."""
    return attributes.get(LOGFIRE_REQUEST) if LOGFIRE_TYPE in attributes else None


def logged_usage(attributes: Mapping[str, Any]) -> bool:
    """Whether the span is Pydantic Logfire's logged response of a streamed model call, with its token usage."""
    return attributes.get(LOGFIRE_TYPE) == LOGFIRE_LOG and attributes.get(genai.OPERATION) is not None


def kind(name: str, attributes: Mapping[str, Any]) -> Kind | None:
    """The kind from the span name alone."""
    if not isinstance(name, str):
        return None
    if name.endswith(LLM_NAME_SUFFIXES):
        return Kind.LLM
    if name.endswith(AGENT_NAME_SUFFIXES):
        return Kind.AGENT
    if name.startswith(STEP_PREFIX):
        return Kind.CHAIN
    return None


def agent_from_name(name: str) -> str | None:
    """``CodeAgent.run`` -> ``CodeAgent``; None for other names."""
    for suffix in AGENT_NAME_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return None


def history_messages(raw: str, cap: int) -> int:
    """Messages re-sent from the session history, counted within the first ``cap`` characters (no copy)."""
    return raw.count(HISTORY_MESSAGE[0], 0, cap) + raw.count(HISTORY_MESSAGE[1], 0, cap)
