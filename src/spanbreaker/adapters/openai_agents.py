"""OpenAI Agents SDK adapter: the OpenInference instrumentor on the breaker's provider.

Why so little is needed (measured on openai-agents 0.20 with openinference-instrumentation-openai-agents 2.6;
the cells are pinned by ``tests/openai_agents/test_conformance.py``):

* The SDK calls its trace processors synchronously on the thread that runs the agent, and the instrumentor
  starts an OpenTelemetry span from each ``on_span_start``: a ``Tripped`` raised by the breaker's ``on_start``
  passes the SDK's tool and model wrappers (they catch ``Exception``) and comes out of ``Runner.run``,
  ``Runner.run_sync`` and handoffs alike, so no framework-specific exception variant is needed.
* A tool span carries its kind at start but its arguments and result only at its end (the instrumentor fills
  them from the SDK's ``FunctionSpanData`` when the span finishes). The breaker decides such a call when it
  ends and vetoes the next one (see ``docs/conformance.md``).
* Importing the SDK takes seconds: when the application has not imported it yet, instrumenting waits until it
  does (:mod:`._deferred`).
* The instrumentor is installed exclusively (the SDK's default exporter to OpenAI's tracing backend is
  displaced), as its ``instrument()`` does by default.
* A function tool's call is shown to the breaker in process when it starts (:mod:`spanbreaker.private_calls`: the
  arguments the model wrote, then the tool's output before its span ends), around the SDK's own
  ``_run_single_tool``: the fifth identical call is vetoed before it runs instead of the next model call, and with
  ``RunConfig(trace_include_sensitive_data=False)`` (no input or output on the SDK's spans) loops are still caught.
  Nothing is added to the spans. On an SDK release whose internals differ, calls are read from the spans alone.
* A steer (``response="steer"``) is raised where the call's span starts, inside the SDK's trace processors, which
  log and swallow any ``Exception``: the call would have run, its span marked as never run. Here the steer is kept
  for the call instead, and the call returns the steer's message as its output without running (what the model
  reads, as it reads a failing tool's error).
"""

from __future__ import annotations

import contextvars
import importlib.util
import inspect
import logging
import threading
from typing import Any

from ..errors import Steered
from ..private_calls import current, showing
from ._deferred import Deferred, being_imported
from .base import PatchLog

logger = logging.getLogger("spanbreaker")

SCOPE = "openinference.instrumentation.openai_agents"
"""Instrumentation scope of every span the instrumentor creates."""


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


def _on_span_start(wrapped: Any, processor: Any, args: Any, kwargs: Any) -> Any:
    """Around the instrumentor's ``on_span_start``: a steer is kept for the call (the SDK would log and swallow
    it); anything else goes on as before."""
    try:
        return wrapped(*args, **kwargs)
    except Steered as steer:
        steers = _steers.get()
        if steers is None:
            raise
        steers.append(steer)
        return None


def check_compatible() -> None:
    """Raise if the SDK installed is not one whose internals the patches were written for."""
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
    from openinference.instrumentation.openai_agents._processor import OpenInferenceTracingProcessor

    if not callable(getattr(OpenInferenceTracingProcessor, "on_span_start", None)):
        problems.append("OpenInferenceTracingProcessor.on_span_start")
    if problems:
        raise RuntimeError("unexpected OpenAI Agents SDK internals: " + ", ".join(problems))


class OpenAIAgentsAdapter:
    name = "openai_agents"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._instrumentor: Any = None
        self._deferred = Deferred("agents")
        self._patches = PatchLog()

    def available(self) -> bool:
        try:
            return (importlib.util.find_spec("agents") is not None
                    and importlib.util.find_spec("openinference.instrumentation.openai_agents") is not None)
        except (ImportError, ValueError):
            return False

    def instrument(self, tracer_provider: Any, processor: Any) -> None:
        """Instrument the Agents SDK for ``tracer_provider`` (whose span processors include ``processor``), now
        or when the application imports it."""
        self._deferred.run_or_defer(lambda: self._instrument(tracer_provider))

    def _instrument(self, tracer_provider: Any) -> None:
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        with self._lock:
            instrumentor = OpenAIAgentsInstrumentor()
            if instrumentor.is_instrumented_by_opentelemetry:  # on another provider: move it to this one
                instrumentor.uninstrument()
            try:
                instrumentor.instrument(tracer_provider=tracer_provider)
            except ImportError:
                if being_imported(SCOPE):  # the launcher is loading this instrumentor right now (see being_imported)
                    return
                raise
            self._instrumentor = instrumentor
            if not self._patches:
                self._patch()

    def _patch(self) -> None:
        try:
            check_compatible()
            from agents.run_internal.tool_execution import _FunctionToolBatchExecutor

            self._patches.wrap(_FunctionToolBatchExecutor, "_run_single_tool", _run_single_tool)
            self._patches.wrap(_FunctionToolBatchExecutor, "_execute_single_tool_body", _execute_single_tool_body)
            from openinference.instrumentation.openai_agents._processor import OpenInferenceTracingProcessor

            self._patches.wrap(OpenInferenceTracingProcessor, "on_span_start", _on_span_start)
        except Exception:  # another SDK release: calls are read from the spans alone
            self._patches.undo()
            logger.warning("spanbreaker could not show the OpenAI Agents SDK's tool calls to the breaker: they are "
                           "read from its spans alone (at their end, and not without sensitive data)", exc_info=True)

    def uninstrument(self) -> None:
        self._deferred.cancel()
        with self._lock:
            if self._instrumentor is not None and self._instrumentor.is_instrumented_by_opentelemetry:
                self._instrumentor.uninstrument()
            self._instrumentor = None
            self._patches.undo()


ADAPTER = OpenAIAgentsAdapter()
