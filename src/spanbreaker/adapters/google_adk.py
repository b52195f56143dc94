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
setting. The stop needs nothing (``run_async`` raises the ``Tripped``; ADK's handlers catch only ``Exception``), nor
does a steer (an ``Exception``, which ADK hands to the model as the call's error). Checked against the ADK it meets
first: on a release whose internals differ, the adapter logs a warning and leaves ADK as it is.
"""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from ..private_calls import showing
from ._patching import PatchingAdapter
from .base import PatchLog

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


def _showing(original: Callable[..., Any]) -> Callable[..., Any]:
    """``record_tool_execution`` with the call shown to the breaker around ADK's own."""

    @contextlib.asynccontextmanager
    async def record_tool_execution(tool: Any, agent: Any, function_args: Any, *args: Any,
                                    **kwargs: Any) -> AsyncIterator[Any]:
        with showing(str(getattr(tool, "name", "")), _text(function_args)) as shown:
            async with original(tool, agent, function_args, *args, **kwargs) as scope:
                try:
                    yield scope
                finally:  # the caller put its response on the scope; ADK's span ends after this
                    shown.result = _response_text(getattr(scope, "function_response_event", None))

    record_tool_execution.__wrapped__ = original  # type: ignore[attr-defined]
    return record_tool_execution


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
    if CALLER_USES not in source:
        problems.append("google.adk.flows.llm_flows.tools._caller")
    if problems:
        raise RuntimeError("unexpected Google ADK internals: " + ", ".join(problems))


class GoogleAdkAdapter(PatchingAdapter):
    name = "google_adk"
    framework = "google.adk"
    title = "Google ADK"
    unguarded = "without content capture on spans, tool calls stay unknown to the breaker"

    def patch(self, patches: PatchLog) -> None:
        check_compatible()
        from google.adk.telemetry import _instrumentation

        patches.patch(_instrumentation, "record_tool_execution", _showing(_instrumentation.record_tool_execution))


ADAPTER = GoogleAdkAdapter()
