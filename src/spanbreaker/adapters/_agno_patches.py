"""Run-time work-arounds for the OpenInference Agno instrumentor and for Agno itself (defects B1-B7).

Each patch is a wrapt wrapper placed *on top of* what the instrumentor installed, recorded so that
:meth:`Patches.remove` puts back exactly what was there. The instrumentor package is never modified. Why each
one exists (numbers from the Agno research notes):

* custom models: the instrumentor only wraps ``Model`` subclasses found inside ``agno.models``; any other
  subclass gets no LLM span, so the breaker could neither count nor veto its calls.
* B1: after ``team.run()`` / ``team.arun()`` the ended team span stays the current span (detach order), so the
  next run joins the old trace and inherits its open breaker. The caller's context is restored.
* B4: under the SDK default of 128 attributes an LLM span loses its kind and ``input.value`` before
  ``on_start`` (session bloat is measured there). The instrumentor's tracer gets 1024.
* B2 and B5: a generator tool (every ``delegate_task_to_member``) that raised was reported as a success with
  partial output, and in sync teams the member's exception, a trip included, was dropped; under ``arun`` the
  tool span was never ended. The tool span now ends with the error and the exception propagates.
* B6 and trips: the instrumentor sets a run span OK whatever happened in streaming mode, and OK over the trip
  marks. A tripped span keeps its ERROR; a streamed run that produced no RunOutput is an ERROR.
* B7: background memory / learning calls run in a thread pool without the caller's context, so their LLM
  spans start new traces the run's breaker never sees. The pool now carries the context.
* ``tool_call_limit``: refused calls create no span, so a model asking again and again for refused calls was
  invisible. Each refused call becomes a TOOL span (error ``ToolCallLimitExceeded``) the detectors see and the
  breaker can veto.
* ``output_schema``: a response that does not validate is silent (no retry, no error). The run span gets
  ``spanbreaker.validation_failed = true`` for the ``validation_failures`` detector.
* ``continue_run``: Agno runs the tools a human confirmed before the run's ``try`` (sync, not streaming), so a
  trip at one of them left the run RUNNING and raised out of ``continue_run``. The run now ends CANCELLED with
  the trip reason, as a trip anywhere else in a run does.
* Workflows: a step whose agent or team the breaker cancelled is only a failed step to Agno, and the workflow
  goes on to its next step (a function step would run; an agent step meets the latched breaker). A function step
  that runs an agent itself returns only its content. A step that ends in a trace the breaker stopped
  raises the trip instead, Agno's ``RunCancelledException`` that Step does not retry, so the workflow ends
  CANCELLED there. The instrumentor sets its workflow, step and parallel spans OK whatever happened; a tripped
  one keeps its ERROR.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from opentelemetry import context as context_api
from opentelemetry import trace as trace_api
from opentelemetry.trace import Status, StatusCode

from .. import marking
from ..breaker import BreakerState
from ..conventions.frameworks import VALIDATION_FAILED
from ._classes import subclasses
from .base import PatchLog

logger = logging.getLogger("spanbreaker")

VALIDATION_ATTRIBUTE = VALIDATION_FAILED
REFUSED_ATTRIBUTE = "spanbreaker.refused"
REFUSED_ERROR = "ToolCallLimitExceeded"
RUN_ID_ATTRIBUTE = "agno.run.id"
"""Where the instrumentor's workflow wrapper writes the workflow's run id (at the end of the run)."""
_MODEL_METHODS = {"invoke": "run", "ainvoke": "arun", "invoke_stream": "run_stream", "ainvoke_stream": "arun_stream"}
_MODEL_ENTRY_POINTS = ("_invoke_with_retry", "_ainvoke_with_retry", "_invoke_stream_with_retry",
                       "_ainvoke_stream_with_retry")


class RaisedLimitsProvider:
    """A tracer provider view whose tracers keep at least ``min_attributes`` attributes per span (B4).

    Only the tracers handed to the Agno instrumentor are affected; the application's provider and its other
    tracers keep their limits.
    """

    def __init__(self, provider: Any, min_attributes: int) -> None:
        self._provider = provider
        self._min = min_attributes

    def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
        tracer = self._provider.get_tracer(*args, **kwargs)
        limits = getattr(tracer, "_span_limits", None)
        current = getattr(limits, "max_span_attributes", None)
        if limits is not None and current is not None and current < self._min:
            from opentelemetry.sdk.trace import SpanLimits

            tracer._span_limits = SpanLimits(
                max_span_attributes=self._min, max_events=limits.max_events, max_links=limits.max_links,
                max_event_attributes=limits.max_event_attributes, max_link_attributes=limits.max_link_attributes,
                max_attribute_length=limits.max_attribute_length,
                max_span_attribute_length=limits.max_span_attribute_length,
            )
        return tracer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._provider, name)


def same_pipeline(tracer: Any, provider: Any) -> bool:
    """Whether spans of ``tracer`` reach the processors of ``provider``."""
    return getattr(tracer, "_active_span_processor", None) is getattr(provider, "_active_span_processor", object())


@contextlib.contextmanager
def loaded_models_only() -> Iterator[None]:
    """While the instrumentor instruments, let it see only the Model classes already imported.

    Its ``find_model_subclasses`` imports every ``agno.models`` module; the lazy wrapping in
    :meth:`Patches._model_entry` covers any class loaded later, on its first call.
    """
    import openinference.instrumentation.agno as instrumentation
    from agno.models.base import Model

    original = instrumentation.find_model_subclasses

    def loaded() -> list[type]:
        return sorted(subclasses(Model), key=lambda cls: len(cls.__mro__), reverse=True)

    instrumentation.find_model_subclasses = loaded
    try:
        yield
    finally:
        instrumentation.find_model_subclasses = original


class ContextExecutor(ThreadPoolExecutor):
    """A thread pool that runs each task in a copy of the submitter's context (B7)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        ctx = contextvars.copy_context()
        return super().submit(ctx.run, fn, *args, **kwargs)


class Patches:
    """The wrappers of one instrumentation, applied and removed together."""

    def __init__(self, tracer: Any, processor: Any, runs: Any, trip_exception: type[BaseException] | None = None
                 ) -> None:
        self.tracer = tracer
        self.processor = processor
        self.runs = runs
        self.trip_exception = trip_exception
        self._log = PatchLog()
        self._models_checked: set[type] = set()
        self._models_lock = threading.Lock()

    # ------------------------------------------------------------------------------------------ plumbing
    def _wrap(self, owner: Any, name: str, wrapper: Callable[..., Any]) -> None:
        self._log.wrap(owner, name, wrapper)

    def _replace(self, owner: Any, name: str, value: Any) -> None:
        self._log.patch(owner, name, value)

    def apply(self) -> None:
        from agno.agent import _response as agent_response
        from agno.agent import _run as agent_run
        from agno.agent.agent import Agent
        from agno.models.base import Model
        from agno.team import _response as team_response
        from agno.team import _run as team_run
        from agno.team.team import Team
        from openinference.instrumentation.agno import _runs_wrapper
        from openinference.instrumentation.agno._tools_wrapper import _FunctionCallWrapper

        for module in (agent_run, team_run):
            for name in ("_run", "_continue_run"):
                if hasattr(module, name):
                    self._wrap(module, name, _restore_context_sync)
            for name in ("_arun", "_acontinue_run"):
                if hasattr(module, name):
                    self._wrap(module, name, _restore_context_async)
        if hasattr(agent_run, "_continue_run") and hasattr(agent_run, "_handle_run_cancellation"):
            self._wrap(agent_run, "_continue_run", self._continue_run)
        self._wrap(_runs_wrapper, "_set_run_status", self._set_run_status)
        self._wrap(_FunctionCallWrapper, "_handle_success_streaming", _tool_stream)
        self._wrap(_FunctionCallWrapper, "_handle_async_success_streaming", _tool_astream)
        for name in _MODEL_ENTRY_POINTS:
            if name in Model.__dict__:
                self._wrap(Model, name, self._model_entry)
        for cls in subclasses(Model):
            self._ensure_model_traced(cls)
        if "create_tool_call_limit_error_result" in Model.__dict__:
            self._wrap(Model, "create_tool_call_limit_error_result", self._refused_call)
        if hasattr(agent_response, "convert_response_to_structured_format"):
            self._wrap(agent_response, "convert_response_to_structured_format", self._structured_output)
        if hasattr(team_response, "_convert_response_to_structured_format"):
            self._wrap(team_response, "_convert_response_to_structured_format", self._structured_output)
        for cls in (Agent, Team):
            if isinstance(cls.__dict__.get("background_executor"), property):
                self._replace(cls, "background_executor", property(_background_executor))
        self._apply_workflow()

    def _apply_workflow(self) -> None:
        try:
            from agno.workflow.parallel import Parallel
            from agno.workflow.step import Step
            from agno.workflow.workflow import Workflow
        except ImportError:  # an Agno without workflows
            return
        if "_process_step_output" in Step.__dict__:
            self._wrap(Step, "_process_step_output", self._step_output)
        sticky = _StickyTripTracer(self.tracer, self.processor, self.runs)
        for owner in (Workflow, Step, Parallel):
            for value in vars(owner).values():
                bound = getattr(value, "_self_wrapper", None)  # a wrapt wrapper the instrumentor put there
                wrapper = getattr(bound, "__self__", None)
                if wrapper is not None and "_tracer" in vars(wrapper) and not isinstance(
                        wrapper._tracer, _StickyTripTracer):
                    self._replace(wrapper, "_tracer", sticky)

    def remove(self) -> None:
        self._log.undo()
        self._models_checked.clear()

    # ------------------------------------------------------------------------------------ custom models
    def _model_entry(self, wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any) -> Any:
        cls = type(instance)
        if cls not in self._models_checked:
            self._ensure_model_traced(cls)
        return wrapped(*args, **kwargs)

    def _ensure_model_traced(self, cls: type) -> None:
        """Wrap the invoke methods a Model subclass defines itself, unless the instrumentor already did."""
        from agno.models.base import Model
        from openinference.instrumentation.agno._model_wrapper import _ModelWrapper
        from wrapt import FunctionWrapper

        with self._models_lock:
            if cls in self._models_checked:
                return
            wrapper = _ModelWrapper(tracer=self.tracer)
            for method, wrapper_name in _MODEL_METHODS.items():
                owner = next((c for c in cls.__mro__ if method in c.__dict__), None)
                if owner is None or owner is Model or not issubclass(owner, Model):
                    continue
                if isinstance(owner.__dict__[method], FunctionWrapper):
                    continue  # wrapped already (by the instrumentor or by us)
                self._wrap(owner, method, getattr(wrapper, wrapper_name))
            self._models_checked.add(cls)

    # ------------------------------------------------------------------------------------- run spans
    def _set_run_status(self, wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any) -> Any:
        span = args[0] if args else kwargs.get("span")
        run_response = args[1] if len(args) > 1 else kwargs.get("run_response")
        try:
            context = span.get_span_context()
            run_id = getattr(run_response, "run_id", None)
            if isinstance(run_id, str) and context.is_valid:
                self.runs.add(run_id, context.trace_id)
            if context.is_valid and run_response is not None:
                self._say_why(run_response, context.trace_id)
            attributes = getattr(span, "attributes", None) or {}
            if attributes.get(marking.TRIPPED) and self.processor.config.mode == "enforce":
                return None  # keep the ERROR status the trip wrote (in observe mode the run's own status wins)
            if run_response is None:
                span.set_status(Status(StatusCode.ERROR, "run failed: no RunOutput (see RunErrorEvent)"))
                return None
        except Exception:
            logger.debug("spanbreaker: run status patch skipped", exc_info=True)
        return wrapped(*args, **kwargs)

    def _say_why(self, run_response: Any, trace_id: int) -> None:
        """A run the breaker cancelled says so: Agno's own text ("Run ... was cancelled") names no reason."""
        status = getattr(getattr(run_response, "status", None), "value", None)
        if status != "CANCELLED":
            return
        record = self.processor.trip_record(trace_id)
        if record is None:
            return
        content = getattr(run_response, "content", None)
        if isinstance(content, str) and content.startswith("spanbreaker tripped"):
            return
        run_response.content = f"spanbreaker tripped [{record.detector}] {record.reason} (trace {record.trace_id})"

    # ---------------------------------------------------------------------------------- continue_run
    def _continue_run(self, wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any) -> Any:
        try:
            return wrapped(*args, **kwargs)
        except BaseException as error:
            if self.trip_exception is None or not isinstance(error, self.trip_exception):
                raise
            agent = args[0] if args else kwargs.get("agent")
            run_response = args[1] if len(args) > 1 else kwargs.get("run_response")
            if agent is None or run_response is None:
                raise
            from agno.agent._run import _handle_run_cancellation, cleanup_and_store

            run_response = _handle_run_cancellation(run_response, error,  # type: ignore[arg-type]
                                                    kwargs.get("run_messages"))
            run_response.content = str(error)  # not the paused run's "I need confirmation"
            trace_id = getattr(error, "trace_id", None)
            if isinstance(run_response.run_id, str) and isinstance(trace_id, str):
                self.runs.add(run_response.run_id, int(trace_id, 16))
            try:
                cleanup_and_store(agent, run_response=run_response, session=kwargs.get("session"),
                                  run_context=kwargs.get("run_context"), user_id=kwargs.get("user_id"))
            except Exception:
                logger.debug("spanbreaker: cancelled continue_run not stored", exc_info=True)
            return run_response

    # ------------------------------------------------------------------------------------- workflows
    def _step_output(self, wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any) -> Any:
        """A step whose agent or team run the breaker cancelled raises the trip, so the workflow stops there."""
        response = args[0] if args else kwargs.get("response")
        error = self._cancelled_by_trip(response)
        if error is not None:
            raise error
        return wrapped(*args, **kwargs)

    def _cancelled_by_trip(self, response: Any) -> BaseException | None:
        """The trip to raise at a step's edge: its agent or team run was cancelled by the breaker, or the step
        ran in a trace whose breaker is open (a function step that ran an agent gets only its content back)."""
        if self.trip_exception is None or self.processor.config.mode != "enforce":
            return None
        cancelled = getattr(getattr(response, "status", None), "value", None) == "CANCELLED"
        record = None
        try:
            context = trace_api.get_current_span().get_span_context()
            trace_id = context.trace_id if context.is_valid else None
            run_id = getattr(response, "run_id", None)
            if trace_id is None and isinstance(run_id, str):
                trace_id = self.runs.get(run_id)
            if trace_id is not None and (cancelled or self.processor.state(trace_id) is BreakerState.OPEN):
                record = self.processor.trip_record(trace_id)
        except Exception:
            logger.debug("spanbreaker: workflow step check skipped", exc_info=True)
        if record is None:
            return None  # cancelled by someone else, or no trip: Agno's own handling stands
        return self.trip_exception(record.detector, record.reason, record.trace_id, record.evidence)

    # ------------------------------------------------------------------------------- refused tool calls
    def _refused_call(self, wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any) -> Any:
        message = wrapped(*args, **kwargs)
        function_call = args[0] if args else kwargs.get("function_call")
        function = getattr(function_call, "function", None)
        name = getattr(function, "name", None) or "tool"
        arguments = _json(getattr(function_call, "arguments", None))
        span = self.tracer.start_span(name, attributes={  # may raise the trip: the refused loop ends here
            "openinference.span.kind": "TOOL", "tool.name": name, "tool.parameters": arguments,
            "input.value": arguments, "input.mime_type": "application/json", REFUSED_ATTRIBUTE: True,
        })
        content = getattr(message, "content", None)
        text = content if isinstance(content, str) else "tool call limit reached"
        span.set_attribute("output.value", text)
        span.set_attribute("output.mime_type", "text/plain")
        span.set_status(Status(StatusCode.ERROR, f"{REFUSED_ERROR}: {text}"))
        span.end()
        return message

    # ------------------------------------------------------------------------------- structured output
    def _structured_output(self, wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any) -> Any:
        result = wrapped(*args, **kwargs)
        try:
            run_response = args[1] if len(args) > 1 else kwargs.get("run_response")
            run_context = args[2] if len(args) > 2 else kwargs.get("run_context")
            schema = getattr(run_context, "output_schema", None)
            content = getattr(run_response, "content", None)
            if schema is not None and content is not None and not _conforms(content, schema):
                span = trace_api.get_current_span()
                attributes = getattr(span, "attributes", None) or {}
                if span.is_recording() and attributes.get("openinference.span.kind") == "AGENT":
                    span.set_attribute(VALIDATION_ATTRIBUTE, True)
        except Exception:
            logger.debug("spanbreaker: structured output check skipped", exc_info=True)
        return result


# ------------------------------------------------------------------------------- sticky trip status
class _StickyTripTracer:
    """The tracer the instrumentor's workflow, step and parallel wrappers start their spans with: each span
    comes back in a :class:`_StickyTripSpan`, so the wrapper's closing ``set_status(OK)`` cannot undo a trip.
    The workflow's run id, which the wrapper writes on its span, joins the run index, so
    :func:`spanbreaker.adapters.agno.trip_record` leads from a ``WorkflowRunOutput`` to the trip too."""

    def __init__(self, tracer: Any, processor: Any, runs: Any) -> None:
        self._tracer = tracer
        self._processor = processor
        self._runs = runs

    def start_span(self, *args: Any, **kwargs: Any) -> Any:
        return _StickyTripSpan(self._tracer.start_span(*args, **kwargs), self._processor, self._runs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tracer, name)


def _sticky_span_class() -> type:
    from wrapt import ObjectProxy

    class StickyTripSpan(ObjectProxy):  # type: ignore[misc,type-arg]
        def __init__(self, span: Any, processor: Any, runs: Any) -> None:
            super().__init__(span)
            self._self_processor = processor
            self._self_runs = runs

        def set_attribute(self, key: str, value: Any) -> None:
            self.__wrapped__.set_attribute(key, value)
            if key == RUN_ID_ATTRIBUTE and isinstance(value, str):
                context = self.__wrapped__.get_span_context()
                if context.is_valid:
                    self._self_runs.add(value, context.trace_id)

        def set_status(self, *args: Any, **kwargs: Any) -> None:
            attributes = getattr(self.__wrapped__, "attributes", None) or {}
            if attributes.get(marking.TRIPPED) and self._self_processor.config.mode == "enforce":
                return  # the trip's ERROR stands (in observe mode the run's own status wins)
            self.__wrapped__.set_status(*args, **kwargs)

    return StickyTripSpan


_StickyTripSpan = _sticky_span_class()


# ------------------------------------------------------------------------------- generator tools
def _stream_text(wrapper: Any, item: Any) -> str:
    from agno.run.agent import RunContentEvent
    from agno.run.team import RunContentEvent as TeamRunContentEvent

    if isinstance(item, (RunContentEvent, TeamRunContentEvent)):
        return str(wrapper._parse_content(item.content))
    return item if isinstance(item, str) else ""


def _end_tool_span(span: Any, text: str, error: BaseException | None) -> None:
    if not span.is_recording():
        return
    if error is not None:
        span.record_exception(error)
        if not (getattr(span, "attributes", None) or {}).get(marking.TRIPPED):
            span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
    else:
        span.set_status(Status(StatusCode.OK))
    span.set_attributes({"output.value": text, "output.mime_type": "text/plain"})
    span.end()


def _stream_args(args: Any, kwargs: Any) -> tuple[Any, Any]:
    values = (*args, kwargs.get("result"), kwargs.get("span")) if len(args) < 2 else args
    return values[0], values[1]


def _tool_stream(wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any) -> Any:
    """The instrumentor's generator-tool span, minus the ``except Exception: pass`` (B2)."""
    result, span = _stream_args(args, kwargs)

    def stream() -> Iterator[Any]:
        text = ""
        try:
            for item in result:
                yield item
                text += _stream_text(instance, item)
        except GeneratorExit:
            _end_tool_span(span, text, None)
            raise
        except BaseException as error:
            _end_tool_span(span, text, error)
            raise
        _end_tool_span(span, text, None)

    return stream()


def _tool_astream(wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any) -> Any:
    """The async twin: the instrumentor left the span open when the member run raised (B5)."""
    result, span = _stream_args(args, kwargs)

    async def stream() -> Any:
        text = ""
        try:
            async for item in result:
                yield item
                text += _stream_text(instance, item)
        except GeneratorExit:
            _end_tool_span(span, text, None)
            raise
        except BaseException as error:
            _end_tool_span(span, text, error)
            raise
        _end_tool_span(span, text, None)

    return stream()


# ----------------------------------------------------------------------------------------- helpers
def _restore_context_sync(wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any) -> Any:
    """B1: whatever the run leaves attached, the caller gets its own context back."""
    before = context_api.get_current()
    try:
        return wrapped(*args, **kwargs)
    finally:
        if context_api.get_current() is not before:
            context_api.attach(before)


async def _restore_context_async(wrapped: Callable[..., Any], instance: Any, args: Any, kwargs: Any) -> Any:
    before = context_api.get_current()
    try:
        return await wrapped(*args, **kwargs)
    finally:
        if context_api.get_current() is not before:
            context_api.attach(before)


def _background_executor(self: Any) -> Any:
    if getattr(self, "_background_executor", None) is None:
        self._background_executor = ContextExecutor(max_workers=3, thread_name_prefix="agno-bg")
    return self._background_executor


def _conforms(content: Any, schema: Any) -> bool:
    if isinstance(schema, dict):
        return isinstance(content, dict)
    if isinstance(schema, type):
        return isinstance(content, schema)
    return True


def _json(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except Exception:
        return str(value)
