"""Microsoft Agent Framework adapter: a tool call is known to the breaker with Agent Framework's sensitive data off.

Agent Framework traces itself with the OpenTelemetry GenAI conventions (``agent_framework.observability``:
``invoke_agent <name>``, ``chat <model>``, ``execute_tool <tool>``, on the global tracer provider; the breaker reads
them with no adapter). Its ``execute_tool`` span carries the call's arguments and result only with sensitive data on
(``enable_instrumentation(enable_sensitive_data=True)``, ``ENABLE_SENSITIVE_DATA=true``), which exports them with
the messages; its default keeps them off, and then every call is unknown to the breaker and a loop runs to Agent
Framework's own function-calling limit.

Here ``FunctionTool.invoke`` shows the breaker the call in process (:mod:`spanbreaker.private_calls`): its arguments
while its span starts, and what the function returned (as Agent Framework renders it for the model:
``FunctionTool.parse_result``'s text) before the span ends. Nothing is added to the span: with sensitive data off
the exported spans stay exactly as Agent Framework makes them, and with it on the span's own attributes are read,
as without the adapter. Budgets and the stop (``Tripped`` out of ``agent.run``: Agent Framework's function loop
catches only ``Exception``) need nothing. A steer (``response="steer"``, an ``Exception`` raised where the call's span
starts) would reach the model only as "Function failed" (Agent Framework keeps a tool's exception from the model
unless ``include_detailed_errors``): here the steered call returns the steer's message as its result. Checked
against the Agent Framework it meets first: on a release whose ``invoke`` differs, the adapter logs a warning and
leaves Agent Framework as it is.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import Any

from ..errors import Steered
from ..private_calls import PrivateCall, current, showing
from ._patching import PatchingAdapter
from .base import PatchLog

INVOKE_KEYWORDS = ("arguments", "context", "tool_call_id", "skip_parsing")
"""``FunctionTool.invoke``'s keyword-only parameters this adapter relies on (``arguments`` above all)."""


def _arguments(arguments: Any) -> str:
    """The arguments the model asked for, as JSON with sorted keys (a model's fields as it dumps them)."""
    try:
        if isinstance(arguments, Mapping):
            value: Any = dict(arguments)
        elif hasattr(arguments, "model_dump"):
            value = arguments.model_dump(mode="json")
        else:
            value = {} if arguments is None else arguments
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(arguments)


def _result_text(tool: Any, result: Any) -> str:
    """What the model reads of ``result``: ``FunctionTool.parse_result``'s text items, as Agent Framework writes them
    on the span with sensitive data on."""
    try:
        parsed = type(tool).parse_result(result)
        return "\n".join(item.text or "" for item in parsed if item.type == "text") or str(parsed)
    except Exception:  # a result Agent Framework itself would fall back on str() for
        return str(result)


async def _invoke(wrapped: Any, tool: Any, args: Any, kwargs: Any) -> Any:
    """Around ``FunctionTool.invoke``: the call shown to the breaker while it runs; a steer raised where its span
    starts is the call's result, the steer's message (Agent Framework hands the model a tool's exception only as
    "Function failed" unless ``include_detailed_errors``)."""
    name = getattr(tool, "name", None)
    if not isinstance(name, str):
        return await wrapped(*args, **kwargs)
    try:
        with showing(name, _arguments(kwargs.get("arguments"))):
            return await wrapped(*args, **kwargs)
    except Steered as steer:
        if kwargs.get("skip_parsing"):
            return str(steer)
        from agent_framework import Content

        return [Content.from_text(str(steer))]


async def _invoke_function(wrapped: Any, tool: Any, args: Any, kwargs: Any) -> Any:
    """Around ``FunctionTool._invoke_function`` (inside the call's span): what the function returned, shown."""
    result = await wrapped(*args, **kwargs)
    shown: PrivateCall | None = current()
    if shown is not None and shown.name == getattr(tool, "name", None):
        shown.result = _result_text(tool, result)
    return result


def check_compatible() -> None:
    """Raise if the Agent Framework installed is not one whose internals the patches were written for."""
    from agent_framework import FunctionTool

    problems = []
    parameters = inspect.signature(FunctionTool.invoke).parameters
    if not inspect.iscoroutinefunction(FunctionTool.invoke) or any(
            parameters.get(key) is None or parameters[key].kind is not inspect.Parameter.KEYWORD_ONLY
            for key in INVOKE_KEYWORDS):
        problems.append(f"FunctionTool.invoke{tuple(parameters)}")
    invoke_function = getattr(FunctionTool, "_invoke_function", None)
    if not inspect.iscoroutinefunction(invoke_function) or tuple(inspect.signature(invoke_function).parameters) != (
            "self", "call_kwargs"):
        problems.append("FunctionTool._invoke_function")
    if not callable(getattr(FunctionTool, "parse_result", None)):
        problems.append("FunctionTool.parse_result")
    if problems:
        raise RuntimeError("unexpected Agent Framework internals: " + ", ".join(problems))


class AgentFrameworkAdapter(PatchingAdapter):
    name = "agent_framework"
    framework = "agent_framework"
    title = "Agent Framework"
    unguarded = "with its sensitive data off, tool calls stay unknown to the breaker"

    def patch(self, patches: PatchLog) -> None:
        check_compatible()
        from agent_framework import FunctionTool

        patches.wrap(FunctionTool, "invoke", _invoke)
        patches.wrap(FunctionTool, "_invoke_function", _invoke_function)


ADAPTER = AgentFrameworkAdapter()
