"""Google ADK adapter: a tool call is known to the breaker when it starts, whatever ADK's content-capture setting.

ADK traces itself with the OpenTelemetry GenAI conventions (``google.adk.telemetry``: ``invoke_agent``,
``generate_content``, ``execute_tool <tool>``, on the global tracer provider; the breaker reads them with no
adapter). Its ``execute_tool`` span starts bare and gets its attributes when it ends; a call's arguments and result
are among them only with content capture on spans (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``),
which exports them with the messages. ADK's default keeps them off, and then every call is unknown to the breaker
and no loop is caught; with them on, they arrive only at the span's end, so the 5th identical call runs and only
the next model call can be vetoed.

Here ADK's ``record_tool_execution`` (the context manager that holds a tool call's span) shows the breaker the call
in process (:mod:`spanbreaker.private_calls`): the arguments the model asked for while the span starts, and the
function response ADK built (as JSON) before the span ends. Nothing is added to the span: without content capture
the exported spans stay exactly as ADK makes them. The 5th identical call is vetoed before it runs, in either
setting. The stop needs nothing (``run_async`` raises the ``Tripped``; ADK's handlers catch only ``Exception``). A
steer (``response="steer"``) would have left ``run_async`` as the ``Steered`` itself (ADK hands a tool's exception
to the model only through an ``on_tool_error_callback``): here the steered call is answered with the steer's
message, ``{"error": ...}``, the tool not run. Checked against the ADK it meets
first: on a release whose internals differ, the adapter logs a warning and leaves ADK as it is.
"""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from ..errors import Steered
from ..private_calls import showing
from ._patching import PatchingAdapter
from .base import PatchLog, SteeredCall

PARAMETERS = ("tool", "agent", "function_args", "invocation_context")
"""``record_tool_execution``'s parameters, as ADK's tool caller passes them."""
CALLER_USES = "_instrumentation.record_tool_execution("
"""How ADK's tool caller (``flows/llm_flows/tools/_caller.py``) reaches it: through the module, at call time."""


def _text(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _response_text(event: Any) -> str | None:
    """The function responses of ADK's response event, as JSON (what the model is sent), or None without any."""
    content = getattr(event, "content", None)
    responses = [part.function_response.response for part in getattr(content, "parts", None) or ()
                 if getattr(part, "function_response", None) is not None]
    if not responses:
        return None
    return _text(responses[0] if len(responses) == 1 else responses)


_STEERED = SteeredCall("spanbreaker_adk_steered")
"""The steer raised where the running tool call's span started: :func:`_call_tool_async` answers with it."""


def _showing(original: Callable[..., Any]) -> Callable[..., Any]:
    """``record_tool_execution`` with the call shown to the breaker around ADK's own. A steer raised where ADK's span
    starts would leave ``run_async`` (ADK turns no tool exception into a response): the call goes on without a span,
    and :func:`_call_tool_async` answers it with the steer's message, without running the tool."""

    @contextlib.asynccontextmanager
    async def record_tool_execution(tool: Any, agent: Any, function_args: Any, *args: Any,
                                    **kwargs: Any) -> AsyncIterator[Any]:
        from google.adk.telemetry._instrumentation import ToolScope

        with showing(str(getattr(tool, "name", "")), _text(function_args)) as shown:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    scope = await stack.enter_async_context(original(tool, agent, function_args, *args, **kwargs))
                except Steered as steer:  # where the span started: the breaker ended it, marked steered
                    with _STEERED.holding(steer):
                        yield ToolScope()
                    return
                try:
                    yield scope
                finally:  # the caller put its response on the scope; ADK's span ends after this
                    shown.result = _response_text(getattr(scope, "function_response_event", None))

    record_tool_execution.__wrapped__ = original  # type: ignore[attr-defined]
    return record_tool_execution


def _answering_steers(original: Callable[..., Any]) -> Callable[..., Any]:
    """ADK's ``_call_tool_async``: a steered call's answer is the steer's message (as a tool's error dict), the tool
    not run."""

    async def _call_tool_async(*args: Any, **kwargs: Any) -> Any:
        steer = _STEERED.get()
        if steer is not None:
            return {"error": str(steer)}
        return await original(*args, **kwargs)

    _call_tool_async.__wrapped__ = original  # type: ignore[attr-defined]
    return _call_tool_async


def check_compatible() -> None:
    """Raise if the ADK installed is not one whose internals the patch was written for."""
    from google.adk.flows.llm_flows.tools import _caller
    from google.adk.telemetry import _instrumentation

    problems = []
    record = getattr(_instrumentation, "record_tool_execution", None)
    if record is None or tuple(inspect.signature(record).parameters) != PARAMETERS:
        problems.append("google.adk.telemetry._instrumentation.record_tool_execution")
    try:
        source = inspect.getsource(_caller)
    except (OSError, TypeError):
        source = ""
    if CALLER_USES not in source or "tool_runner=lambda: _call_tool_async(" not in source:
        problems.append("google.adk.flows.llm_flows.tools._caller")
    if not inspect.iscoroutinefunction(getattr(_caller, "_call_tool_async", None)) or not hasattr(
            _instrumentation, "ToolScope"):
        problems.append("google.adk.flows.llm_flows.tools._caller._call_tool_async")
    if problems:
        raise RuntimeError("unexpected Google ADK internals: " + ", ".join(problems))


class GoogleAdkAdapter(PatchingAdapter):
    name = "google_adk"
    framework = "google.adk"
    title = "Google ADK"
    unguarded = "without content capture on spans, tool calls stay unknown to the breaker"

    def patch(self, patches: PatchLog) -> None:
        check_compatible()
        from google.adk.flows.llm_flows.tools import _caller
        from google.adk.telemetry import _instrumentation

        patches.patch(_instrumentation, "record_tool_execution", _showing(_instrumentation.record_tool_execution))
        patches.patch(_caller, "_call_tool_async", _answering_steers(_caller._call_tool_async))


ADAPTER = GoogleAdkAdapter()
