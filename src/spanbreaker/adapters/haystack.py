"""Haystack adapter: OpenInference's Haystack instrumentor on the breaker's provider, its model-call spans known as
such when they start, and a tool span for each tool call an ``Agent`` makes.

What the stock instrumentor gives (measured on haystack-ai 3.4 with openinference-instrumentation-haystack 0.1.46;
pinned by ``tests/haystack``): a span per component run (``OpenAIChatGenerator.run``, ``Agent.run``) that starts with
no attributes at all and gets its kind (``LLM`` for a chat generator), model and messages just after; and no span per
tool call (an ``Agent`` runs its tools inside its own run: Haystack opens a ``haystack.agent.step.tool`` span per call
on its own tracer, which no OpenTelemetry provider sees unless the application connects one). So the breaker saw no
model call (no budget counted a Haystack request) and no tool call (a looping ``Agent`` ran to its
``max_agent_steps``). The adapter fills both gaps:

* **components imported later**: the instrumentor wraps the component classes registered when it is switched on,
  and later ones only when a ``Pipeline`` runs them; under the launcher (or ``instrument()`` before the
  application's imports) an ``Agent`` and its chat generator, imported afterwards and run on their own, made no span
  at all. The adapter traces each class registered later the same way (the instrumentor's own wrapper).
* **model calls at start**: a chat generator's span starts with the attributes the instrumentor itself computes for
  it (its own ``_set_component_runner_request_attributes``, run for the adapter just before the span starts), so it
  is a model call when it starts, counted and vetoable; other components' spans start as they do.
* **tool calls**: around each of Haystack's own per-call tool spans (``tool_calling._create_tool_span``, which the
  ``Agent`` opens in the worker that runs the tool), an OpenInference TOOL span named after the tool, starting with
  ``tool.name`` and the arguments the model gave (``input.value``) and ending with the tool's result as Haystack
  hands it on (``output.value``) or an error status. It is made by the instrumentor's tracer (so its trace
  configuration applies: ``OPENINFERENCE_HIDE_INPUTS`` / ``..._OUTPUTS`` redact them) under the current span: the
  ``Agent.run`` span, one trace per run.

A trip where a tool span starts raises ``Tripped`` (a ``BaseException``) in Haystack's worker thread; the ``Agent``
reads each call's future and catches no ``BaseException``, so it comes out of ``agent.run(...)`` (sync; async runs
gather the calls, the same). A steer (``response="steer"``) raised there would have ended the run too (Haystack
reports a tool's failure to the model only as a ``ToolInvocationError`` from ``Tool.invoke``): the steered call's
``invoke`` fails with one carrying the steer's message instead, the tool not run, and the ``Agent`` hands it to the
model as the call's error result. Everything Haystack-specific stays in this module; Haystack is imported only when
instrumenting, and not before the application imports it (:mod:`._deferred`).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from opentelemetry import trace as trace_api

from ..errors import Steered
from ._hooked import HookedAdapter
from .base import PatchLog, PendingAttributes, StartAttributes, SteeredCall

logger = logging.getLogger("spanbreaker")

SCOPE = "openinference.instrumentation.haystack"
"""The instrumentor's module, and the instrumentation scope of its spans."""
KIND = "openinference.span.kind"
TOOL_NAME = "tool.name"
INPUT, INPUT_MIME = "input.value", "input.mime_type"
OUTPUT, OUTPUT_MIME = "output.value", "output.mime_type"
OUTPUT_TAG = "haystack.agent.step.tool.output"
"""The content tag Haystack puts a call's result on (``{"error": ...}`` for a failed call)."""

_PENDING = PendingAttributes("spanbreaker_haystack_start")
_STEERED = SteeredCall("spanbreaker_haystack_steered")
"""The steer raised where the running tool call's span started: the tool's ``invoke`` answers with it."""


# ------------------------------------------------------------------------------------------------ steers
def _steer_error(tool: Any) -> Any:
    """The steered call's failure, as Haystack's tool calling reports a failed tool (``ToolInvocationError``, which an
    ``Agent`` hands the model as the call's error result), or None when the call is not steered."""
    steer = _STEERED.get()
    if steer is None:
        return None
    from haystack.tools.errors import ToolInvocationError

    return ToolInvocationError(str(steer), tool_name=str(getattr(tool, "name", "tool")))


def _answering_steers(wrapped: Any, tool: Any, args: Any, kwargs: Any) -> Any:
    """Around ``Tool.invoke``: a steered call fails with the steer's message, the tool not run."""
    error = _steer_error(tool)
    if error is not None:
        raise error
    return wrapped(*args, **kwargs)


async def _answering_steers_async(wrapped: Any, tool: Any, args: Any, kwargs: Any) -> Any:
    error = _steer_error(tool)
    if error is not None:
        raise error
    return await wrapped(*args, **kwargs)


# ------------------------------------------------------------------------------------ model calls at start
def _start_attributes(wrapper: Any, args: tuple[Any, ...]) -> dict[str, Any] | None:
    """The instrumentor's own request attributes for a chat generator's run (its ``instance``, with ``wrapped``'s
    arguments), the wrapper's tracer made to add them at start; None for any other component, whose span starts as
    the instrumentor makes it."""
    from openinference.instrumentation.haystack import _wrappers

    if len(args) < 4:
        return None
    wrapped, component, call_args, call_kwargs = args[:4]
    if _wrappers._get_component_type(component) is not _wrappers.ComponentType.GENERATOR:
        return None
    tracer = getattr(wrapper, "_tracer", None)
    if tracer is not None and not isinstance(tracer, StartAttributes):
        wrapper._tracer = StartAttributes(tracer, _PENDING)
    bound = _wrappers._get_bound_arguments(wrapped, *call_args, **call_kwargs)
    return dict(_wrappers._set_component_runner_request_attributes(bound, component))


def _component_wrapper(asynchronous: bool) -> Callable[..., Any]:
    """Around the instrumentor's ``_ComponentRunWrapper.__call__`` / ``_AsyncComponentRunWrapper.__call__``."""
    def pending(wrapper: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return _start_attributes(wrapper, args)
        except Exception:  # an odd component: its span starts as the instrumentor makes it
            logger.debug("spanbreaker could not name a Haystack component's span at start", exc_info=True)
            return None

    return _PENDING.around(pending, asynchronous)


# ---------------------------------------------------------------------------------------------- tool calls
class _ToolSpan:
    """Haystack's span for one tool call, as the ``Agent`` tags it, with the call's result also put on the
    OpenInference tool span around it."""

    def __init__(self, inner: Any, span: Any) -> None:
        self._inner = inner
        self._span = span

    def set_content_tag(self, key: str, value: Any) -> None:
        self._inner.set_content_tag(key, value)
        if key != OUTPUT_TAG:
            return
        if isinstance(value, dict) and set(value) == {"error"}:  # a failed call: Haystack's ToolInvocationError
            # Tagged inside the ``except`` that caught it: the exception being handled is that error, and its cause
            # the tool's own (its class, which Haystack's message leaves out, is what error_loop compares).
            caught = sys.exc_info()[1]
            failure = (caught.__cause__ or caught) if caught is not None else None
            if isinstance(failure, Exception):
                self._span.record_exception(failure)
                self._span.set_status(trace_api.Status(trace_api.StatusCode.ERROR,
                                                       f"{type(failure).__name__}: {failure}"))
            else:
                self._span.set_status(trace_api.Status(trace_api.StatusCode.ERROR,
                                                       f"ToolInvocationError: {value['error']}"))
            return
        self._span.set_attributes({OUTPUT: _result_text(value), OUTPUT_MIME: "text/plain"})

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _result_text(result: Any) -> str:
    """A tool's result as Haystack writes it for the model (``tool_calling._result_to_string``), else as text."""
    try:
        from haystack.components.agents import tool_calling

        return str(tool_calling._result_to_string(result))
    except Exception:
        return result if isinstance(result, str) else repr(result)


def _arguments(arguments: Any) -> str:
    try:
        return json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(arguments)


class _WatchedRegistry(dict[str, type]):
    """Haystack's component registry (``component.registry``: every ``@component`` class, by path), telling the
    adapter of each class registered from now on, and writing through to the registry it stands in for (which
    ``uninstrument`` puts back complete)."""

    def __init__(self, original: dict[str, type], registered: Callable[[type], None]) -> None:
        super().__init__(original)
        self._original = original
        self._registered = registered

    def __setitem__(self, key: str, value: type) -> None:
        super().__setitem__(key, value)
        self._original[key] = value
        try:
            self._registered(value)
        except Exception:  # the class registers; only its spans go missing
            logger.debug("spanbreaker could not trace a Haystack component registered late", exc_info=True)


class HaystackAdapter(HookedAdapter):
    name = "haystack"
    framework = "haystack"
    scope = SCOPE

    def _tracer(self) -> Any:
        """The instrumentor's tracer (its trace configuration applies), else one on the provider instrumented."""
        tracer = getattr(self._instrumentor, "_tracer", None)
        return tracer if tracer is not None else trace_api.get_tracer(SCOPE, tracer_provider=self._provider)

    def patch(self, patches: PatchLog) -> None:
        from haystack.components.agents import tool_calling
        from haystack.core.component.component import component
        from openinference.instrumentation.haystack import _wrappers

        registry = getattr(component, "registry", None)
        if type(registry) is dict:
            patches.patch(component, "registry", _WatchedRegistry(registry, self._registered))

        for cls_name, asynchronous in (("_ComponentRunWrapper", False), ("_AsyncComponentRunWrapper", True)):
            cls = getattr(_wrappers, cls_name, None)
            if cls is not None and "__call__" in vars(cls):
                patches.wrap(cls, "__call__", _component_wrapper(asynchronous))
        original = getattr(tool_calling, "_create_tool_span", None)
        if callable(original):
            patches.patch(tool_calling, "_create_tool_span", self._tool_span_factory(original))
            from haystack.tools.tool import Tool

            patches.wrap(Tool, "invoke", _answering_steers)
            patches.wrap(Tool, "invoke_async", _answering_steers_async)
        else:
            logger.warning("spanbreaker could not find Haystack's per-call tool span: an Agent's tool calls are not "
                           "seen (haystack.components.agents.tool_calling._create_tool_span)")

    def _registered(self, cls: type) -> None:
        """A component class registered after the instrumentor went on: its ``run`` / ``run_async`` traced as the
        instrumentor traces the classes registered before (it wraps those when switched on, and later ones only when
        a ``Pipeline`` runs them: an ``Agent`` or a chat generator used on its own, imported after the launcher
        switched the instrumentor on, made no span). Recorded where the instrumentor keeps its originals, so its
        ``uninstrument`` restores them and a pipeline run does not wrap them again."""
        instrumentor = self._instrumentor
        if instrumentor is None or not instrumentor.is_instrumented_by_opentelemetry:
            return  # not on yet: switching on wraps every class registered by then
        from openinference.instrumentation.haystack import _wrappers
        from wrapt import wrap_function_wrapper

        tracer = getattr(instrumentor, "_tracer", None)
        for method, originals_name, wrapper_cls in (
                ("run", "_original_component_run_methods", _wrappers._ComponentRunWrapper),
                ("run_async", "_original_component_run_async_methods", _wrappers._AsyncComponentRunWrapper)):
            originals = getattr(instrumentor, originals_name, None)
            if tracer is None or not isinstance(originals, dict) or method not in vars(cls) or cls in originals:
                continue
            originals[cls] = getattr(cls, method)
            wrap_function_wrapper(cls, method, wrapper_cls(tracer=tracer))

    def _tool_span_factory(self, original: Callable[..., Any]) -> Callable[..., Any]:
        @contextmanager
        def create_tool_span(tool: Any, tool_call: Any, parent_span: Any) -> Iterator[Any]:
            name = str(getattr(tool_call, "tool_name", None) or getattr(tool, "name", "tool"))
            attributes = {KIND: "TOOL", TOOL_NAME: name, INPUT: _arguments(getattr(tool_call, "arguments", None)),
                          INPUT_MIME: "application/json"}
            with ExitStack() as stack:
                inner = stack.enter_context(original(tool, tool_call, parent_span))
                try:
                    span = stack.enter_context(self._tracer().start_as_current_span(name, attributes=attributes))
                except Steered as steer:  # where the span started (the breaker ended it, marked steered)
                    with _STEERED.holding(steer):
                        yield inner
                    return
                yield _ToolSpan(inner, span)

        return create_tool_span

    def make_instrumentor(self) -> Any:
        from openinference.instrumentation.haystack import HaystackInstrumentor

        return HaystackInstrumentor()

    def instrumenting(self, instrumentor: Any) -> bool:
        """The launcher's ``HaystackInstrumentor().instrument()`` imports Haystack from its ``_instrument``: that
        import ran this adapter, and the ``_instrument`` under way finishes switching the instrumentor on."""
        return self.instrument_under_way(instrumentor)


ADAPTER = HaystackAdapter()
