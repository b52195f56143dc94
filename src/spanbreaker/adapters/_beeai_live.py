"""Live spans for BeeAI: the OpenInference BeeAI instrumentor's span shapes, started when each run starts.

Why not the stock ``BeeAIInstrumentor``: it buffers every run in memory and creates all the OTel spans of a
run tree only after the *root* run has finished (``_build_tree`` on the root's ``RunContextFinishEvent``).
A span processor then sees the whole run after the fact, so no call can be vetoed; worse, a trip found
while that tree is built raises out of the root run's ``finish`` emission after the run already completed,
and leaves the rest of the tree unbuilt. This instrumentor reuses the stock per-class processors
(``ProcessorLocator``: the same names, kinds and attributes) but starts the span on the run's
``RunContextStartEvent`` and ends it on its ``RunContextFinishEvent``, so the breaker's ``on_start`` runs
before the tool, model or agent does.

Where a trip reaches BeeAI: ``on_start`` raises ``spanbreaker.Tripped`` (a ``BaseException``) inside this
blocking emitter listener. BeeAI's emitter runs listeners as tasks of an ``asyncio.TaskGroup``, which passes
it on wrapped in a ``BaseExceptionGroup`` (unwrapped again at each run boundary by :mod:`._beeai_stop`).
``RunContext.enter`` re-raises it from the ``start`` emission (destroying the context) and from the runner
task; ``Retryable``/``do_retry``, ``Tool.run``, ``ChatModel.run`` and the agents' loops catch ``Exception``
only. So the trip is neither wrapped into ``FrameworkError``/``ToolError``/``AgentError``, nor retried, nor
fed back to the model: it reaches the caller of ``await agent.run(...)``, and every run on the way emits its
``finish``, which ends its span here.

Tool retries (``ToolRunOptions.retry_options``) run inside one tool run. Attempt 1 is the tool run's span;
each further attempt is a child TOOL span started on the attempt's ``ToolStartEvent``, so a retry storm
counts every failing attempt and the breaker can veto the next attempt before it runs.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from opentelemetry import trace as trace_api
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]
from opentelemetry.trace import Span, Status, StatusCode

from ..errors import Steered

logger = logging.getLogger("spanbreaker")

SCOPE = "openinference.instrumentation.beeai"
"""Instrumentation scope of the spans made here: the stock instrumentor's, so dashboards built on it match."""
ATTEMPT = "spanbreaker.beeai.attempt"
"""Attribute on a retry attempt span: the attempt number (2, 3, ...)."""
_KIND = "openinference.span.kind"
_EVENT_ONLY = frozenset({"new_token"})
"""Stock per-event child spans dropped here: one span per streamed chunk would swamp the trace (each event is
still on the run's span as a span event)."""
_MAX_RUNS = 10_000
"""Runs tracked at once; beyond it the oldest are ended (a run whose finish event never came)."""


def _nanos(moment: datetime | None) -> int | None:
    if moment is None:
        return None
    from openinference.instrumentation.beeai._utils import _datetime_to_span_time

    return _datetime_to_span_time(moment)


@dataclass
class _Run:
    """One BeeAI run (``RunContext``) and its live span."""

    node: Any
    """The stock OpenInference processor collecting this run's attributes."""
    span: Span | None
    group: str
    arguments: str | None = None
    """A tool run's arguments as JSON, without BeeAI's ``{"input": ..., "options": ...}`` envelope."""
    tool_starts: int = 0
    attempt: Span | None = None
    children: list[str] = field(default_factory=list)


class LiveBeeAIInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Emit the OpenInference BeeAI spans live, one per BeeAI run, so a span processor can veto calls."""

    # No __init__: BaseInstrumentor is a singleton whose constructor runs again on every ``LiveBeeAIInstrumentor()``;
    # state set there would be reset while instrumented (the stock instrumentor loses its emitter cleanup that way).
    _runs: dict[str, _Run] = {}
    _cleanup: Any = None
    _tracer: Any = None

    def instrumentation_dependencies(self) -> Collection[str]:
        return ("beeai-framework >= 0.1.51",)

    def _instrument(self, **kwargs: Any) -> None:
        from beeai_framework.emitter import Emitter, EmitterOptions
        from openinference.instrumentation import OITracer, TraceConfig
        from openinference.instrumentation.beeai import __version__

        provider = kwargs.get("tracer_provider") or trace_api.get_tracer_provider()
        config = kwargs.get("config") or TraceConfig()
        self._tracer = OITracer(trace_api.get_tracer(SCOPE, __version__, provider), config=config)
        self._runs = {}
        self._cleanup = Emitter.root().match(
            "*.*", self._handler, EmitterOptions(match_nested=True, is_blocking=True))

    def _uninstrument(self, **kwargs: Any) -> None:
        if self._cleanup is not None:
            self._cleanup()
            self._cleanup = None
        for run_id in list(self._runs):
            self._finish(run_id, self._runs.pop(run_id))

    # ------------------------------------------------------------------------------------------ events
    async def _handler(self, data: Any, meta: Any) -> None:
        """Blocking root listener. Raises only a trip (from a span start); every other error is logged."""
        from beeai_framework.context import RunContextFinishEvent, RunContextStartEvent

        trace = meta.trace
        if trace is None:
            return
        run = self._runs.get(trace.run_id)
        if run is None:
            if isinstance(data, RunContextStartEvent):
                self._start(data, meta)  # may raise the trip: the run never starts
            return
        try:
            if isinstance(data, RunContextFinishEvent):
                self._runs.pop(trace.run_id, None)
                await run.node.end(data, meta)
                self._finish(trace.run_id, run)
                return
            if meta.context.get("internal"):
                return
            await run.node.update(data, meta)
        except Exception:
            logger.warning("spanbreaker could not record a BeeAI event", exc_info=True)
            return
        self._attempts(run, data, meta)  # may raise the trip: the retry never runs

    def _start(self, data: Any, meta: Any) -> None:
        from openinference.instrumentation.beeai.processors.locator import ProcessorLocator

        trace = meta.trace
        try:
            node = ProcessorLocator.locate(data, meta)
        except Exception:
            logger.warning("spanbreaker could not describe a BeeAI run", exc_info=True)
            return
        parent = self._runs.get(trace.parent_run_id) if trace.parent_run_id else None
        context = trace_api.set_span_in_context(parent.span) if parent is not None and parent.span else None
        wrapper = node.span
        attributes = dict(wrapper.attributes)
        arguments = _tool_arguments(data) if getattr(wrapper.kind, "value", wrapper.kind) == "TOOL" else None
        if arguments is not None:
            attributes["input.value"] = arguments
        run = _Run(node=node, span=None, group=trace.id, arguments=arguments)
        if len(self._runs) >= _MAX_RUNS:
            oldest = next(iter(self._runs))
            self._finish(oldest, self._runs.pop(oldest))
        self._runs[trace.run_id] = run
        if parent is not None:
            parent.children.append(trace.run_id)
        try:
            run.span = self._tracer.start_span(
                wrapper.name, context=context, attributes=attributes,
                start_time=_nanos(wrapper.started_at), openinference_span_kind=wrapper.kind)
        except Steered:  # a steer: the processor ended the span; BeeAI's tool-error path tells the model
            self._runs.pop(trace.run_id, None)
            raise
        except Exception:
            self._runs.pop(trace.run_id, None)
            logger.warning("spanbreaker could not start a BeeAI span", exc_info=True)
        except BaseException:  # the trip: the processor has ended and exported the vetoed span
            self._runs.pop(trace.run_id, None)
            raise

    def _attempts(self, run: _Run, data: Any, meta: Any) -> None:
        """Tool retries: a span per attempt after the first, ended by the attempt's error or success."""
        from beeai_framework.tools import ToolErrorEvent, ToolStartEvent, ToolSuccessEvent

        if isinstance(data, ToolStartEvent):
            run.tool_starts += 1
            if run.tool_starts < 2 or run.span is None:
                return
            self._end_attempt(run, None, None)
            attributes = {key: value for key, value in run.node.span.attributes.items()
                          if key in ("tool.name", "tool.description", "input.mime_type")}
            attributes["input.value"] = run.arguments or run.node.span.attributes.get("input.value", "")
            attributes[ATTEMPT] = run.tool_starts
            run.attempt = self._tracer.start_span(
                run.node.span.name, context=trace_api.set_span_in_context(run.span), attributes=attributes,
                start_time=_nanos(meta.created_at), openinference_span_kind="tool")
        elif isinstance(data, ToolErrorEvent):
            self._end_attempt(run, None, data.error)
        elif isinstance(data, ToolSuccessEvent):
            self._end_attempt(run, data.output.get_text_content(), None)

    def _end_attempt(self, run: _Run, output: str | None, error: BaseException | None) -> None:
        span, run.attempt = run.attempt, None
        if span is None:
            return
        try:
            if error is not None:
                span.set_attribute("output.value", _explain(error))
                _record_error(span, error)
            elif output is not None:
                span.set_attribute("output.value", output)
            span.end()
        except Exception:
            logger.warning("spanbreaker could not end a BeeAI retry span", exc_info=True)

    # ------------------------------------------------------------------------------------------ finish
    def _finish(self, run_id: str, run: _Run) -> None:
        """End a run's span with everything the stock processor collected; end orphaned child runs first."""
        for child_id in run.children:
            child = self._runs.pop(child_id, None)
            if child is not None:
                self._finish(child_id, child)
        self._end_attempt(run, None, None)
        span = run.span
        if span is None or not span.is_recording():
            return
        wrapper = run.node.span
        try:
            skip = (_KIND, "input.value") if run.arguments is not None else (_KIND,)
            _set_keeping_essentials(span, {k: v for k, v in wrapper.attributes.items() if k not in skip},
                                    getattr(wrapper.kind, "value", None))
            for event in wrapper.events:
                span.add_event(event.name, event.attributes, event.timestamp)
            context = trace_api.set_span_in_context(span)
            for child in wrapper.children:
                if child.name not in _EVENT_ONLY:
                    self._event_span(child, context)
            if wrapper.error is not None and wrapper.status == StatusCode.ERROR:
                _record_error(span, wrapper.error)
            elif wrapper.status == StatusCode.OK and _status_unset(span):
                span.set_status(Status(StatusCode.OK))
        except Exception:
            logger.warning("spanbreaker could not complete a BeeAI span", exc_info=True)
        span.end(_nanos(wrapper.ended_at))

    def _event_span(self, wrapper: Any, context: Any) -> None:
        """The stock instrumentor's per-event child spans (retry, error, update...), as UNKNOWN-kind spans.

        The stock code gives them the parent's kind, which would count a tool's error event as one more tool
        call; they record what happened inside the run, not a call.
        """
        attributes = {key: value for key, value in wrapper.attributes.items() if key != _KIND}
        span = self._tracer.start_span(wrapper.name, context=context, attributes=attributes,
                                       start_time=_nanos(wrapper.started_at), openinference_span_kind="unknown")
        if wrapper.error is not None:
            _record_error(span, wrapper.error)
        span.end(_nanos(wrapper.ended_at))


_BULKY = ("llm.input_messages.", "llm.output_messages.", "llm.tools.", "metadata.")


def _set_keeping_essentials(span: Any, attributes: dict[str, Any], kind: Any) -> None:
    """Set a finished run's attributes so that span attribute limits evict the bulk, never the essentials.

    The SDK drops the *oldest* attribute when a span is full (128 by default), and a long run's LLM span has
    hundreds of message attributes. Set those first, then the rest, then re-set the kind and any trip marks
    the breaker wrote during the run, so they are the newest and survive.
    """
    current = getattr(span, "attributes", None) or {}
    marks = {key: value for key, value in current.items() if key.startswith("spanbreaker.")}
    span.set_attributes({key: value for key, value in attributes.items() if key.startswith(_BULKY)})
    span.set_attributes({key: value for key, value in attributes.items() if not key.startswith(_BULKY)})
    if isinstance(kind, str):
        span.set_attribute(_KIND, kind)
    if marks:
        span.set_attributes(marks)


def _explain(error: BaseException) -> str:
    explain = getattr(error, "explain", None)
    try:
        return str(explain()) if callable(explain) else str(error)
    except Exception:
        return str(error)


def _record_error(span: Any, error: BaseException) -> None:
    """Record BeeAI's wrapper (``ToolError``, ``AgentError``) with its whole cause chain as the message.

    ``str(ToolError)`` names no cause; ``explain()`` lists every error of the chain (``ConnectionError(builtins):
    ...``), so a detector unwrapping the root exception class sees the real one.
    """
    text = _explain(error)
    span.record_exception(error, attributes={"exception.message": text})
    span.set_status(Status(StatusCode.ERROR, text[:256]))


def _tool_arguments(data: Any) -> str | None:
    """The tool's own arguments. The stock span's ``input.value`` wraps them in the run envelope
    ``{"input": {...}, "options": null}``, whose constant words would make different queries look alike to
    the near-duplicate detectors."""
    run_params = getattr(data, "input", None)
    value = run_params.get("input") if isinstance(run_params, dict) else None
    if value is None:
        return None
    try:
        from beeai_framework.utils.strings import to_json

        return str(to_json(value, sort_keys=False))
    except Exception:
        return None


def _status_unset(span: Any) -> bool:
    status = getattr(span, "status", None)
    return status is None or status.status_code is StatusCode.UNSET
