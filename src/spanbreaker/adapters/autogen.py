"""Microsoft AutoGen (AgentChat) adapter: autogen-core's own ``execute_tool`` spans say what a call was and what it
returned, and a trip gets out of AutoGen's tool task and team runtime to the caller.

AutoGen instruments itself (``autogen_core._telemetry``: ``invoke_agent <name>`` and ``execute_tool <tool>``, on the
global tracer provider, read by :mod:`spanbreaker.conventions.genai`; no OpenInference instrumentor is needed). What
this adapter fixes around (measured on autogen-agentchat / autogen-core 0.7.5; the cells are pinned by
``tests/autogen/test_conformance.py``):

* **Tool arguments and results.** ``BaseTool.run_json`` starts its ``execute_tool`` span with the tool's name,
  description and call id only: neither the arguments nor the result ever reach a span, so every call is unknown
  to the breaker, never identical, and a loop runs to ``max_tool_iterations``. Here the span starts with
  ``gen_ai.tool.call.arguments`` (the arguments AutoGen hands the tool, as JSON) and ends with
  ``gen_ai.tool.call.result`` (the tool's return value as AutoGen renders it for the model,
  ``return_value_as_string``). Everything else is AutoGen's own ``trace_tool_span``. The same for a streaming tool's
  ``BaseStreamTool.run_json_stream`` (an agent or a team called as a tool: ``AgentTool``, ``TeamTool``), whose
  result is its final return value.
* **MCP tools.** ``McpWorkbench.call_tool`` (autogen-ext) starts its own ``execute_tool`` span, also without the
  arguments or the result. Here the span starts with the arguments (handed to AutoGen's ``trace_tool_span`` as
  above) and ends with the server's answer as AutoGen renders it for the model (``ToolResult.to_text``: the text
  parts, an image as ``[image]``), read where the workbench awaits the server inside that span. A steer raised as
  the span starts becomes the call's error result, as AutoGen's own workbench makes of a tool's exception (the MCP
  workbench would have let it end the agent's run).
* **The stop in a tool task.** ``AssistantAgent`` runs a turn's tool calls in an ``asyncio`` task and waits on a
  queue for that task's events until the task puts its end marker; a ``Tripped`` (a ``BaseException``) raised
  where a tool span starts killed the task before the marker, and ``agent.run`` waited forever. Here a tool task
  that ends with a trip puts the end marker for it, so the agent's own ``await`` of the task raises
  the ``Tripped`` on the agent's task, and ``agent.run(...)`` / ``run_stream`` raise it (the hook is where the
  task is made, so it holds whatever wraps ``_execute_tool_call``: OpenInference's instrumentor does).
* **One trace per team run.** A team's embedded runtime runs each message in a task of its own and only *links*
  its message spans: without a span around ``team.run`` every agent turn was a trace of its own, so a loop across
  turns was never seen in one trace. Where no span is current when a team run starts (the application's, or
  OpenInference's ``<Team>.run_stream``), the adapter holds a CHAIN span ``<Team>.run_stream`` around it.
* **The stop in a team.** A team (``RoundRobinGroupChat``, ``SelectorGroupChat``, ...) runs its agents as
  handlers in its embedded ``SingleThreadedAgentRuntime``; a ``Tripped`` out of a handler becomes the runtime's
  background exception, raised by ``stop_when_idle`` in the team's shutdown task, whose ``except Exception`` let it
  through: no termination reached the team's output queue, and ``team.run`` waited forever. Here it leaves
  ``stop_when_idle`` as an ``Exception`` carrier (the team then ends its stream with a ``RuntimeError`` naming it),
  and ``BaseGroupChat.run_stream`` raises the ``Tripped`` it carried instead of that ``RuntimeError``.

The arguments and results go on spans AutoGen exports, as OpenInference's instrumentors put them on other frameworks'
tool spans. ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` set to ``false`` (or ``NO_CONTENT`` /
``EVENT_ONLY``: the GenAI instrumentations' switch) keeps them off the spans, as AutoGen ships them; each call is
then shown to the breaker in process instead (:mod:`spanbreaker.private_calls`, as every call also is), so loops are
still caught.

A :class:`~spanbreaker.Steered` (an ``Exception``) needs nothing: AutoGen's workbench turns it into the tool's
error result for the model. Model calls have no AutoGen span: they count when the model client's own
instrumentor makes one (OpenInference's OpenAI instrumentor under ``OpenAIChatCompletionClient``). Every patch is
checked against the AutoGen it meets first: on a release whose internals differ, the adapter logs a warning and
leaves AutoGen as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping
from types import SimpleNamespace
from typing import Any

import opentelemetry.context as context_api
from opentelemetry import trace as trace_api

from ..errors import Steered, Tripped
from ..private_calls import current, showing
from ._patching import PatchingAdapter
from .base import PatchLog, StartAttributes

logger = logging.getLogger("spanbreaker")

ARGUMENTS = "gen_ai.tool.call.arguments"
RESULT = "gen_ai.tool.call.result"
SCOPE = "autogen-core"
"""The tracer AutoGen's ``trace_tool_span`` takes from the global provider when none is given."""
TEAM_SCOPE = "spanbreaker.adapters.autogen"
"""The tracer of the span this adapter holds around a team run that has none."""

CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI instrumentations' content switch: these values keep tool arguments and results off AutoGen's spans."""
NO_CONTENT = frozenset({"false", "no_content", "event_only"})

RUN_JSON_PARAMETERS = ("self", "args", "cancellation_token", "call_id")
MCP_CALL_PARAMETERS = ("self", "name", "arguments", "cancellation_token", "call_id")
MCP_ACTOR_CALL_PARAMETERS = ("self", "type", "args")
STREAM_PARAMETER = "stream_queue"
"""The parameter through which ``AssistantAgent._process_model_result``'s tool task (``_execute_tool_calls``) gets
the agent's event queue, whose ``None`` ends the agent's wait for the task's events."""


class _RuntimeTripped(Exception):
    """A trip on its way out of a team's runtime: an ``Exception``, which the team's shutdown task turns into the
    stream's end (a ``BaseException`` it would let through, leaving ``team.run`` waiting)."""

    def __init__(self, trip: Tripped) -> None:
        super().__init__(str(trip))
        self.trip = trip


_kept: weakref.WeakKeyDictionary[Any, Tripped] = weakref.WeakKeyDictionary()
"""Per runtime: the trip its ``stop_when_idle`` carried out, until the team's ``run_stream`` raises it."""


# ------------------------------------------------------------------------------------- arguments and results
def _arguments(args: Mapping[str, Any]) -> str:
    try:
        return json.dumps(dict(args), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(dict(args))


def _content_on() -> bool:
    """Whether tool arguments and results go on spans (the GenAI instrumentations' content switch, read per call)."""
    return os.environ.get(CAPTURE_CONTENT, "").strip().lower() not in NO_CONTENT


def _tracer(arguments: Mapping[str, Any] | None) -> Any:
    """The tracer for AutoGen's ``trace_tool_span``: spans starting with ``arguments`` (None: as AutoGen makes them)."""
    return trace_api.get_tracer(SCOPE) if arguments is None else _tracer_with(_arguments(arguments))


def _tracer_with(arguments: str) -> Any:
    return StartAttributes(trace_api.get_tracer(SCOPE), SimpleNamespace(attributes={ARGUMENTS: arguments}))


async def _run_json(self: Any, args: Mapping[str, Any], cancellation_token: Any, call_id: str | None = None) -> Any:
    """``BaseTool.run_json`` as autogen-core 0.7 writes it, with the call's arguments on its ``execute_tool`` span
    at start (through AutoGen's own ``trace_tool_span``) and the result on it at the end."""
    from autogen_core import EVENT_LOGGER_NAME
    from autogen_core.logging import ToolCallEvent
    from autogen_core.tools._base import trace_tool_span

    content = _content_on()
    tracer = _tracer(args if content else None)
    with showing(self._name, _arguments(args)) as shown, trace_tool_span(
            tool_name=self._name, tracer=tracer, tool_description=self._description, tool_call_id=call_id) as span:
        return_value = await self.run(self._args_type.model_validate(args), cancellation_token)
        result = shown.result = self.return_value_as_string(return_value)
        if content:
            span.set_attribute(RESULT, result)
    logging.getLogger(EVENT_LOGGER_NAME).info(ToolCallEvent(tool_name=self.name, arguments=dict(args), result=result))
    return return_value


async def _run_json_stream(self: Any, args: Mapping[str, Any], cancellation_token: Any,
                           call_id: str | None = None) -> AsyncIterator[Any]:
    """``BaseStreamTool.run_json_stream`` as autogen-core 0.7 writes it (a streaming tool; AgentChat's ``AgentTool``
    and ``TeamTool``, an agent or a team called as a tool, are such tools), with the call's arguments on its
    ``execute_tool`` span at start and the final return value's text on it at the end, as :func:`_run_json`."""
    from autogen_core import EVENT_LOGGER_NAME
    from autogen_core.logging import ToolCallEvent
    from autogen_core.tools._base import trace_tool_span

    content = _content_on()
    tracer = _tracer(args if content else None)
    return_value: Any = None
    with showing(self._name, _arguments(args)) as shown, trace_tool_span(
            tool_name=self._name, tracer=tracer, tool_description=self._description, tool_call_id=call_id) as span:
        async for result in self.run_stream(self._args_type.model_validate(args), cancellation_token):
            return_value = result
            yield result
        final = return_value is not None and isinstance(return_value, self._return_type)
        if final:
            shown.result = self.return_value_as_string(return_value)
            if content:
                span.set_attribute(RESULT, shown.result)
    if return_value is None:
        raise AssertionError("The tool must yield a final return value at the end of the stream.")
    if not final:
        raise TypeError(f"Expected return value of type {self._return_type.__name__}, but got "
                        f"{type(return_value).__name__}")
    logging.getLogger(EVENT_LOGGER_NAME).info(ToolCallEvent(
        tool_name=self.name, arguments=dict(args), result=self.return_value_as_string(return_value)))


# ------------------------------------------------------------------------------------------------- MCP tools
async def _mcp_call_tool(wrapped: Any, workbench: Any, args: Any, kwargs: Any) -> Any:
    """Around ``McpWorkbench.call_tool``: the call shown to the breaker while it runs (its arguments for
    :func:`_mcp_tool_span`, its answer from :func:`_mcp_actor_call`), and a steer raised where its span starts turned
    into the call's error result (a ``Tripped`` goes on: it stops the run)."""
    bound = inspect.signature(wrapped).bind(*args, **kwargs)
    name = bound.arguments["name"]
    try:
        with showing(name, _arguments(bound.arguments.get("arguments") or {})):
            return await wrapped(*args, **kwargs)
    except Steered as steer:
        from autogen_core.tools import TextResultContent, ToolResult

        return ToolResult(name=name, result=[TextResultContent(content=workbench._format_errors(steer))],
                          is_error=True)


@contextlib.contextmanager
def _mcp_tool_span(tool_name: str, **kwargs: Any) -> Iterator[Any]:
    """AutoGen's ``trace_tool_span`` as ``McpWorkbench.call_tool`` calls it, the span starting with the call's
    arguments where content goes on spans (its result comes from :func:`_mcp_actor_call`)."""
    from autogen_core.tools._base import trace_tool_span

    shown = current()
    if shown is not None and shown.arguments is not None and _content_on() and kwargs.get("tracer") is None:
        kwargs["tracer"] = _tracer_with(shown.arguments)
    with trace_tool_span(tool_name, **kwargs) as span:
        yield span


def _mcp_text(result: Any) -> str:
    """An MCP ``CallToolResult`` as AutoGen hands it to the model (``ToolResult.to_text(replace_image="[image]")``
    of what ``McpWorkbench.call_tool`` makes of it)."""
    parts = []
    for content in getattr(result, "content", None) or ():
        kind = getattr(content, "type", None)
        if kind == "text":
            parts.append(str(content.text))
        elif kind == "image":
            parts.append("[image]")
        else:  # an embedded resource, as the workbench renders it
            parts.append(content.model_dump_json())
    return "\n".join(parts)


async def _mcp_actor_call(wrapped: Any, actor: Any, args: Any, kwargs: Any) -> Any:
    """Around ``McpSessionActor.call``: for ``call_tool`` it hands the workbench the server call to await inside its
    ``execute_tool`` span; here that awaiting also puts the answer on the span, before the span ends."""
    pending = await wrapped(*args, **kwargs)
    command = args[0] if args else kwargs.get("type")
    shown = current()
    if command != "call_tool" or shown is None:
        return pending
    span = trace_api.get_current_span()
    content = _content_on() and span.is_recording()

    async def answered() -> Any:
        result = await pending
        try:
            shown.result = _mcp_text(result)
            if content:
                span.set_attribute(RESULT, shown.result)
        except Exception:  # an answer of another shape: the span ends without it
            logger.debug("spanbreaker could not read an MCP tool result", exc_info=True)
        return result

    return answered()


# ----------------------------------------------------------------------------------------------- the stop
class _ToolTaskAsyncio:
    """The ``asyncio`` module as ``autogen_agentchat.agents._assistant_agent`` sees it: the same, except that a
    turn's tool task ending with a trip puts its end marker on the agent's event queue (which the task, killed
    before its last line, never did), so the agent stops waiting and its ``await`` of the task raises the trip.

    Hooked where the task is made rather than around ``_execute_tool_call``: an instrumentor wrapping that method
    (OpenInference's) starts its tool span outside any wrapper installed before it, and a trip raised there would
    pass such a wrapper by."""

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    @staticmethod
    def create_task(coro: Any, **kwargs: Any) -> Any:
        frame = getattr(coro, "cr_frame", None)
        queue = frame.f_locals.get(STREAM_PARAMETER) if frame is not None else None
        task = asyncio.create_task(coro, **kwargs)
        if isinstance(queue, asyncio.Queue):
            task.add_done_callback(lambda done: _end_stream(done, queue))
        return task


def _end_stream(task: Any, queue: Any) -> None:
    if task.cancelled() or not isinstance(task.exception(), Tripped):
        return
    try:
        queue.put_nowait(None)
    except Exception:  # a full or closed queue: nothing is waiting on it
        logger.debug("spanbreaker could not end an AutoGen tool stream", exc_info=True)


async def _stop_when_idle(wrapped: Any, runtime: Any, args: Any, kwargs: Any) -> Any:
    """Around ``SingleThreadedAgentRuntime.stop_when_idle``: a trip raised by a handler leaves as
    :class:`_RuntimeTripped`, and is kept for the team's ``run_stream``."""
    try:
        return await wrapped(*args, **kwargs)
    except Tripped as trip:
        if isinstance(trip, Exception):
            raise
        _kept[runtime] = trip
        raise _RuntimeTripped(trip) from None


def _run_stream(wrapped: Any, team: Any, args: Any, kwargs: Any) -> Any:
    """Around ``BaseGroupChat.run_stream``: one trace per team run, and the ``RuntimeError`` AutoGen ends the stream
    with after a carried trip is raised as that trip."""
    stream = wrapped(*args, **kwargs)

    async def events() -> AsyncIterator[Any]:
        span = None
        if not trace_api.get_current_span().is_recording():
            span = trace_api.get_tracer(TEAM_SCOPE).start_span(
                f"{type(team).__name__}.run_stream", attributes={"openinference.span.kind": "CHAIN"})
        token = context_api.attach(trace_api.set_span_in_context(span)) if span is not None else None
        try:
            async for event in stream:
                yield event
        except RuntimeError:
            runtime = getattr(team, "_runtime", None)
            trip = _kept.pop(runtime, None) if runtime is not None else None
            if trip is not None:
                if span is not None:
                    span.set_status(trace_api.Status(trace_api.StatusCode.ERROR, str(trip)))
                raise trip from None
            raise
        finally:
            try:
                await stream.aclose()
            finally:
                if token is not None:
                    try:
                        context_api.detach(token)
                    except Exception:  # closed from another context: the span still ends
                        logger.debug("spanbreaker could not detach an AutoGen team span", exc_info=True)
                if span is not None:
                    span.end()

    return events()


# ---------------------------------------------------------------------------------------------- the adapter
def _parameters(function: Any) -> tuple[str, ...]:
    return tuple(inspect.signature(function).parameters)


def check_compatible() -> None:
    """Raise if the AutoGen installed is not one whose internals the patches were written for."""
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.agents import _assistant_agent as module
    from autogen_agentchat.teams import BaseGroupChat
    from autogen_core import SingleThreadedAgentRuntime
    from autogen_core.tools import BaseStreamTool, BaseTool
    from autogen_core.tools._base import trace_tool_span

    problems = []
    if _parameters(BaseTool.run_json) != RUN_JSON_PARAMETERS:
        problems.append(f"BaseTool.run_json{_parameters(BaseTool.run_json)}")
    stream = BaseStreamTool.run_json_stream
    if _parameters(stream) != RUN_JSON_PARAMETERS or not inspect.isasyncgenfunction(stream):
        problems.append(f"BaseStreamTool.run_json_stream{_parameters(stream)}")
    if "tracer" not in _parameters(trace_tool_span):
        problems.append("trace_tool_span")
    if not callable(getattr(BaseTool, "return_value_as_string", None)):
        problems.append("BaseTool.return_value_as_string")
    try:
        source = inspect.getsource(AssistantAgent._process_model_result)
    except (OSError, TypeError):
        source = ""
    if "asyncio.create_task(_execute_tool_calls(" not in source or f"{STREAM_PARAMETER}: asyncio.Queue" not in source:
        problems.append("AssistantAgent._process_model_result")
    if getattr(module, "asyncio", None) is not asyncio:
        problems.append("autogen_agentchat.agents._assistant_agent.asyncio")
    if not inspect.iscoroutinefunction(SingleThreadedAgentRuntime.stop_when_idle):
        problems.append("SingleThreadedAgentRuntime.stop_when_idle")
    if not inspect.isasyncgenfunction(BaseGroupChat.run_stream):
        problems.append("BaseGroupChat.run_stream")
    if problems:
        raise RuntimeError("unexpected AutoGen internals: " + ", ".join(problems))


def _mcp_modules() -> tuple[Any, Any] | None:
    """autogen-ext's MCP workbench and actor modules, or None where autogen-ext's ``mcp`` extra is not installed."""
    try:
        from autogen_ext.tools.mcp import _actor, _workbench
    except ImportError:
        return None
    return _workbench, _actor


def _mcp_problems() -> list[str]:
    modules = _mcp_modules()
    if modules is None:
        return []
    workbench, actor = modules
    problems = []
    if _parameters(workbench.McpWorkbench.call_tool) != MCP_CALL_PARAMETERS:
        problems.append(f"McpWorkbench.call_tool{_parameters(workbench.McpWorkbench.call_tool)}")
    try:
        source = inspect.getsource(workbench.McpWorkbench.call_tool)
    except (OSError, TypeError):
        source = ""
    if "with trace_tool_span(" not in source or 'self._actor.call("call_tool"' not in source:
        problems.append("McpWorkbench.call_tool's body")
    if _parameters(actor.McpSessionActor.call) != MCP_ACTOR_CALL_PARAMETERS:
        problems.append(f"McpSessionActor.call{_parameters(actor.McpSessionActor.call)}")
    return problems


def patch(patches: PatchLog) -> None:
    from autogen_agentchat.agents import _assistant_agent
    from autogen_agentchat.teams import BaseGroupChat
    from autogen_core import SingleThreadedAgentRuntime
    from autogen_core.tools import BaseStreamTool, BaseTool

    patches.patch(BaseTool, "run_json", _run_json)
    patches.patch(BaseStreamTool, "run_json_stream", _run_json_stream)
    patches.patch(_assistant_agent, "asyncio", _ToolTaskAsyncio())
    patches.wrap(SingleThreadedAgentRuntime, "stop_when_idle", _stop_when_idle)
    patches.wrap(BaseGroupChat, "run_stream", _run_stream)


def patch_mcp(patches: PatchLog) -> None:
    """The MCP workbench's patches (autogen-ext's ``mcp`` extra; :class:`_McpWorkbench`)."""
    modules = _mcp_modules()
    if modules is None:
        return
    problems = _mcp_problems()
    if problems:
        raise RuntimeError("unexpected autogen-ext MCP internals: " + ", ".join(problems))
    workbench, actor = modules
    patches.wrap(workbench.McpWorkbench, "call_tool", _mcp_call_tool)
    patches.patch(workbench, "trace_tool_span", _mcp_tool_span)
    patches.wrap(actor.McpSessionActor, "call", _mcp_actor_call)


class _McpWorkbench(PatchingAdapter):
    """The MCP workbench's patches, apart from the rest: patched when the application imports autogen-ext's MCP
    module (autogen-ext's ``mcp`` extra), and another autogen-ext's MCP internals leave the rest of the adapter on."""

    name = "autogen_mcp"
    framework = "autogen_ext.tools.mcp"
    title = "AutoGen's MCP workbench"
    unguarded = "its tool spans stay without arguments or results"

    def patch(self, patches: PatchLog) -> None:
        patch_mcp(patches)


class AutoGenAdapter(PatchingAdapter):
    name = "autogen"
    framework = "autogen_agentchat"
    title = "AutoGen"
    unguarded = "it runs as it is, its tool spans without arguments or results"

    def __init__(self) -> None:
        super().__init__()
        self._mcp = _McpWorkbench()

    def patch(self, patches: PatchLog) -> None:
        check_compatible()
        patch(patches)

    def instrument(self, tracer_provider: Any, processor: Any) -> None:
        super().instrument(tracer_provider, processor)
        self._mcp.instrument(tracer_provider, processor)

    def uninstrument(self) -> None:
        self._mcp.uninstrument()
        super().uninstrument()


ADAPTER = AutoGenAdapter()
