"""The OpenAI Agents SDK's own tool execution, patched once for whichever instrumentor traces it.

OpenInference's instrumentor (:mod:`.openai_agents`) and OpenLLMetry's (:mod:`.openllmetry_openai_agents`) both start
an OpenTelemetry span from the SDK's trace processors as a function call starts, and both put its arguments and
result on the span only as it ends (and neither with ``trace_include_sensitive_data=False`` or, for OpenLLMetry,
``TRACELOOP_TRACE_CONTENT=false``). So each function call is shown to the breaker in process around the SDK's
``_FunctionToolBatchExecutor._run_single_tool`` (whose function span holds the call: the arguments the model wrote,
then the tool's output before its span ends), whichever instrumentor makes the span: the fifth identical call is
vetoed before it runs. Nothing is added to the spans.

A steer (``response="steer"``) is raised where the call's span starts, inside the SDK's trace processors, which log
and swallow any ``Exception`` (and OpenLLMetry's own processor too): the call would have run. Each adapter wraps its
instrumentor's span start in :func:`keep_steer`, so the steer is kept for the call, and the call returns the steer's
message as its output without running (what the model reads, as it reads a failing tool's error).

The SDK patches are held while either adapter is instrumented (:data:`TOOL_CALLS`), and applied once: two adapters
wrapping the same methods would show each call twice.
"""

from __future__ import annotations

import contextvars
import inspect
from typing import Any

from ..errors import Steered
from ..private_calls import current, showing
from .base import PatchLog, SharedPatches

RUN_SINGLE_TOOL = ("task_state", "func_tool", "tool_call")
"""The keyword-only parameters of the SDK's ``_FunctionToolBatchExecutor._run_single_tool`` the patch reads."""


def _trace_name(module: Any, func_tool: Any, tool_call: Any) -> str:
    """The name the SDK gives the call's function span (as ``_run_single_tool`` does)."""
    name = module.get_tool_call_trace_name(tool_call) or module.get_function_tool_trace_name(func_tool)
    return str(name or func_tool.name)


_steers: contextvars.ContextVar[list[Steered] | None] = contextvars.ContextVar("spanbreaker_agents_steers",
                                                                               default=None)
"""The steer raised where the running function call's span started, kept for :func:`_execute_single_tool_body`."""


async def _run_single_tool(wrapped: Any, executor: Any, args: Any, kwargs: Any) -> Any:
    """Around ``_run_single_tool`` (whose function span holds the call): the call shown to the breaker."""
    from agents.run_internal import tool_execution

    func_tool, tool_call = kwargs.get("func_tool"), kwargs.get("tool_call")
    arguments = getattr(tool_call, "arguments", None)
    if func_tool is None or not isinstance(arguments, str):
        return await wrapped(*args, **kwargs)
    token = _steers.set([])
    try:
        with showing(_trace_name(tool_execution, func_tool, tool_call), arguments):
            return await wrapped(*args, **kwargs)
    finally:
        _steers.reset(token)


async def _execute_single_tool_body(wrapped: Any, executor: Any, args: Any, kwargs: Any) -> Any:
    """Around ``_execute_single_tool_body`` (inside the function span): a steered call returns the steer's message
    without running; otherwise the tool's output, shown."""
    steers = _steers.get()
    if steers:
        return str(steers[0])
    result = await wrapped(*args, **kwargs)
    shown = current()
    if shown is not None:
        shown.result = str(result)
    return result


def keep_steer(wrapped: Any, processor: Any, args: Any, kwargs: Any) -> Any:
    """Around an instrumentor's span start: a steer is kept for the call (the SDK, or the instrumentor, would log and
    swallow it); anything else goes on as before."""
    try:
        return wrapped(*args, **kwargs)
    except Steered as steer:
        steers = _steers.get()
        if steers is None:
            raise
        steers.append(steer)
        return None


def sdk_problems() -> list[str]:
    """What of the SDK's internals the patches read is not as they were written for (empty when all is)."""
    from agents.run_internal import tool_execution

    executor = getattr(tool_execution, "_FunctionToolBatchExecutor", None)
    problems = []
    for method in ("_run_single_tool", "_execute_single_tool_body"):
        function = getattr(executor, method, None)
        parameters = inspect.signature(function).parameters if function is not None else {}
        if not inspect.iscoroutinefunction(function) or any(
                parameters.get(key) is None or parameters[key].kind is not inspect.Parameter.KEYWORD_ONLY
                for key in RUN_SINGLE_TOOL):
            problems.append(f"_FunctionToolBatchExecutor.{method}")
    for helper in ("get_tool_call_trace_name", "get_function_tool_trace_name"):
        if not callable(getattr(tool_execution, helper, None)):
            problems.append(helper)
    return problems


def _patch_sdk(patches: PatchLog) -> None:
    problems = sdk_problems()
    if problems:
        raise RuntimeError("unexpected OpenAI Agents SDK internals: " + ", ".join(problems))
    from agents.run_internal.tool_execution import _FunctionToolBatchExecutor

    patches.wrap(_FunctionToolBatchExecutor, "_run_single_tool", _run_single_tool)
    patches.wrap(_FunctionToolBatchExecutor, "_execute_single_tool_body", _execute_single_tool_body)


TOOL_CALLS = SharedPatches(_patch_sdk)
