"""smolagents adapter: the OpenInference instrumentor, plus the repairs a hard stop needs.

Why each piece exists (measured on smolagents 1.26 / openinference-instrumentation-smolagents 0.1.43):

* The trip itself needs nothing framework-specific: ``spanbreaker.Tripped`` is a ``BaseException``, which
  passes every ``except Exception`` in smolagents, in its local Python executor and in agent-written code.
* Custom ``Model`` subclasses (anything not exported by ``smolagents``) get no LLM span from the instrumentor,
  so the breaker would never see their calls, tokens or prompts. They are traced here with the
  instrumentor's own wrapper, whether defined before or after :func:`instrument`.
* When ``run()`` raises (a trip, a model error, ``interrupt()``) the instrumentor never ends the agent span
  and never detaches its context: the span is lost and the next run nests under it. Every run is therefore
  executed in a copy of the caller's context, and the aborted run's spans are ended, with the trip marks or
  the error, at the moment of the abort. In a streaming run the instrumentor would also force status OK on
  the aborted agent span; ending it first keeps the ERROR.
* A trip's ``Step N`` span would be finalised as OK (both of its wrappers catch only ``Exception``), and a
  TOOL span that a ``BaseException`` passes through would end with no status; both are marked on the way out.

Everything framework-specific stays in this module; it imports smolagents only when instrumenting.
"""

from __future__ import annotations

import contextvars
import importlib.util
import inspect
import logging
import threading
from collections.abc import Callable, Generator, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from .. import marking
from ..errors import Tripped
from ..processor import BreakerSpanProcessor
from ._classes import subclasses
from .base import PatchLog

logger = logging.getLogger("spanbreaker")

SCOPE = "openinference.instrumentation.smolagents"
"""Instrumentation scope of the instrumentor's spans (and of the LLM spans traced here)."""

_SDK_LOGGER = "opentelemetry.sdk.trace"
_ENDED_SPAN_WARNINGS = frozenset({
    "Setting attribute on ended span.", "Calling end() on an ended span.", "Tried calling %s on an ended span.",
})

_unwinding: contextvars.ContextVar[bool] = contextvars.ContextVar("spanbreaker_smolagents_unwinding", default=False)
"""Set in the (copied) context of a run whose agent span this adapter ended early: the instrumentor's own
clean-up then touches an ended span, and the SDK's warnings about it are noise, not news."""


class _EndedSpanWarnings(logging.Filter):
    """Drops the SDK's "ended span" warnings caused by the instrumentor's clean-up after an early end."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (_unwinding.get() and record.msg in _ENDED_SPAN_WARNINGS)


class _State:
    """What :func:`instrument` changed, so that :func:`uninstrument` can undo exactly that."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.processor: BreakerSpanProcessor | None = None
        self.instrumentor: Any = None
        self.tracer: Any = None
        self.owns_instrumentor = False
        self.inner = PatchLog()
        """Patches made before the instrumentor's."""
        self.outer = PatchLog()
        """Patches made after the instrumentor's (undone first)."""
        self.exported_models: frozenset[type] = frozenset()
        self.log_filter: _EndedSpanWarnings | None = None


_state = _State()


# ----------------------------------------------------------------------------------------------- adapter
class SmolagentsAdapter:
    name = "smolagents"

    def available(self) -> bool:
        try:
            return (importlib.util.find_spec("smolagents") is not None
                    and importlib.util.find_spec("openinference.instrumentation.smolagents") is not None)
        except (ImportError, ValueError):
            return False

    def instrument(self, tracer_provider: Any, processor: BreakerSpanProcessor) -> None:
        instrument(tracer_provider, processor)

    def uninstrument(self) -> None:
        uninstrument()


ADAPTER = SmolagentsAdapter()


def instrument(tracer_provider: Any, processor: BreakerSpanProcessor) -> None:
    """Instrument smolagents for ``tracer_provider`` and route abort repairs to ``processor`` (idempotent)."""
    import smolagents
    from openinference.instrumentation import OITracer, TraceConfig
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    from openinference.instrumentation.smolagents.version import __version__
    from smolagents import CodeAgent, MultiStepAgent, Tool, ToolCallingAgent
    from smolagents.models import Model

    with _state.lock:
        _state.processor = processor
        if _state.instrumentor is not None:
            return
        # Inner wrappers go on before the instrumentor's, so they run inside its Step span.
        instrumentor = SmolagentsInstrumentor()
        _state.owns_instrumentor = not instrumentor.is_instrumented_by_opentelemetry
        if _state.owns_instrumentor:
            for cls in (CodeAgent, ToolCallingAgent):
                _state.inner.wrap(cls, "_step_stream", _StepGuard())
            _state.inner.wrap(Tool, "__call__", _ToolGuard())
            instrumentor.instrument(tracer_provider=tracer_provider)
        _state.instrumentor = instrumentor
        # Outer wrappers go on after it: the copied context must hold the instrumentor's attach.
        outer = _state.outer
        outer.wrap(MultiStepAgent, "_run_stream", _RunStreamGuard())
        outer.wrap(MultiStepAgent, "run", _RunGuard())
        _state.tracer = OITracer(trace.get_tracer(SCOPE, __version__, tracer_provider), config=TraceConfig())
        _state.exported_models = frozenset(
            v for v in vars(smolagents).values() if isinstance(v, type) and issubclass(v, Model))
        for cls in subclasses(Model):
            _trace_model_class(cls)
        original_hook = Model.__dict__.get("__init_subclass__")

        def __init_subclass__(cls: type, /, **kwargs: Any) -> None:
            super(Model, cls).__init_subclass__(**kwargs)
            _trace_model_class(cls)

        outer.patch(Model, "__init_subclass__", classmethod(__init_subclass__), original=original_hook)
        _state.log_filter = _EndedSpanWarnings()
        logging.getLogger(_SDK_LOGGER).addFilter(_state.log_filter)


def uninstrument() -> None:
    """Undo :func:`instrument`: the instrumentor, the run guards and the custom-model tracing."""
    with _state.lock:
        _state.outer.undo()
        if _state.instrumentor is not None:
            if _state.owns_instrumentor and _state.instrumentor.is_instrumented_by_opentelemetry:
                _state.instrumentor.uninstrument()  # restores our inner wrappers: undone next
            _state.instrumentor = None
        _state.inner.undo()
        if _state.log_filter is not None:
            logging.getLogger(_SDK_LOGGER).removeFilter(_state.log_filter)
            _state.log_filter = None
        _state.tracer = None


def _trace_model_class(cls: type) -> None:
    """Give a Model subclass the instrumentor's LLM span when the instrumentor itself would not."""
    if _state.tracer is None or cls in _state.exported_models:
        return
    try:
        from openinference.instrumentation.smolagents._wrappers import _ModelStreamWrapper, _ModelWrapper
    except ImportError:  # a future instrumentor: custom models then go untraced, as without spanbreaker
        return
    import wrapt

    traced = False
    for attribute, wrapper_type in (("generate", _ModelWrapper), ("generate_stream", _ModelStreamWrapper)):
        function = cls.__dict__.get(attribute)
        if function is None or isinstance(function, wrapt.ObjectProxy):
            continue
        _state.outer.patch(cls, attribute, wrapt.FunctionWrapper(function, wrapper_type(tracer=_state.tracer)))
        traced = True
    # The instrumentor reads these when a reply carries no token_usage, and they are gone from smolagents 1.26:
    # without a default, tracing a custom model would turn its replies into AgentGenerationError.
    for attribute in ("last_input_token_count", "last_output_token_count"):
        if traced and not hasattr(cls, attribute):
            _state.outer.patch(cls, attribute, 0)


# ------------------------------------------------------------------------------------------- run guards
def _end_aborted_run(agent_span: Any, exc: BaseException) -> None:
    """End an aborted run's agent span and whatever is still open under it, exactly once, with status."""
    if not agent_span.is_recording():
        return
    _unwinding.set(True)
    context = agent_span.get_span_context()
    reason = None if isinstance(exc, Tripped) else f"{type(exc).__name__}: {exc}"[:256]
    processor = _state.processor
    if processor is not None:
        processor.end_open_spans(context.trace_id, reason, under=context.span_id)
    if agent_span.is_recording():  # a span the breaker does not track (another provider, an evicted trace)
        if isinstance(exc, Tripped):
            mode = processor.config.mode if processor is not None else "enforce"
            marking.mark_tripped(agent_span, exc.detector, exc.reason, exc.evidence, mode)
        else:
            agent_span.set_status(Status(StatusCode.ERROR, reason))
        agent_span.end()


def _is_agent_span(span: Any) -> bool:
    name = getattr(span, "name", None)
    return isinstance(name, str) and name.endswith(".run") and span.is_recording()


class _RunGuard:
    """``MultiStepAgent.run``, outermost: the run happens in a copy of the caller's context.

    The instrumentor attaches the agent span without detaching it when ``run()`` raises; in a copied context
    that attach dies with the copy, so the caller's context is exactly what it was and the next run starts a
    clean trace. A streaming run's generator is driven inside the same copy, step by step.
    """

    def __call__(self, wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...],
                 kwargs: Mapping[str, Any]) -> Any:
        context = contextvars.copy_context()
        try:
            result = context.run(wrapped, *args, **kwargs)
        except BaseException as exc:
            _repair(context, exc)
            raise
        if inspect.isgenerator(result):
            return _drive(context, result)
        return result


def _repair(context: contextvars.Context, exc: BaseException) -> None:
    """Fallback for an abort the stream guard did not see: end the span the instrumentor left attached."""
    try:
        leaked = context.run(trace.get_current_span)
        if _is_agent_span(leaked):
            context.run(_end_aborted_run, leaked, exc)
    except Exception:
        logger.debug("spanbreaker could not repair an aborted smolagents run", exc_info=True)


def _drive(context: contextvars.Context, stream: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
    """Iterate a streaming run inside the run's context, so its steps nest under its agent span."""
    try:
        while True:
            try:
                item = context.run(next, stream)
            except StopIteration as stop:
                return stop.value
            yield item
    except GeneratorExit:
        context.run(stream.close)
        raise
    except BaseException as exc:
        _repair(context, exc)
        raise


class _RunStreamGuard:
    """``MultiStepAgent._run_stream``, inside the instrumentor's agent span: end that span at the abort.

    Runs before the instrumentor's own exception handling, which would leave the span open (plain run) or
    force its status to OK (streaming run).
    """

    def __call__(self, wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...],
                 kwargs: Mapping[str, Any]) -> Generator[Any, Any, Any]:
        try:
            return (yield from wrapped(*args, **kwargs))
        except GeneratorExit:
            raise
        except BaseException as exc:
            span = trace.get_current_span()
            if _is_agent_span(span):
                try:
                    _end_aborted_run(span, exc)
                except Exception:
                    logger.debug("spanbreaker could not end an aborted smolagents run", exc_info=True)
            raise


class _StepGuard:
    """``<Agent>._step_stream``, inside the instrumentor's ``Step N`` span: mark it when a stop passes through.

    The instrumentor finalises a step that a ``BaseException`` left as OK; marked ERROR first, it stays ERROR.
    """

    def __call__(self, wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...],
                 kwargs: Mapping[str, Any]) -> Generator[Any, Any, Any]:
        try:
            return (yield from wrapped(*args, **kwargs))
        except (GeneratorExit, Exception):
            raise
        except BaseException as exc:
            span = trace.get_current_span()
            name = getattr(span, "name", None)
            if isinstance(name, str) and name.startswith("Step ") and span.is_recording():
                try:
                    _mark_stop(span, exc)
                except Exception:
                    logger.debug("spanbreaker could not mark a smolagents step", exc_info=True)
            raise


class _ToolGuard:
    """``Tool.__call__``, inside the instrumentor's TOOL span: a ``BaseException`` from a tool body (a user's
    Ctrl-C, a trip raised deeper down) would otherwise leave that span without a status."""

    def __call__(self, wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...],
                 kwargs: Mapping[str, Any]) -> Any:
        try:
            return wrapped(*args, **kwargs)
        except Exception:
            raise
        except BaseException as exc:
            span = trace.get_current_span()
            attributes = getattr(span, "attributes", None) or {}
            if attributes.get("openinference.span.kind") == "TOOL" and span.is_recording():
                try:
                    _mark_stop(span, exc)
                except Exception:
                    logger.debug("spanbreaker could not mark a smolagents tool span", exc_info=True)
            raise


def _mark_stop(span: Any, exc: BaseException) -> None:
    if isinstance(exc, Tripped):
        attributes = getattr(span, "attributes", None) or {}
        if not attributes.get(marking.TRIPPED):
            mode = _state.processor.config.mode if _state.processor is not None else "enforce"
            marking.mark_tripped(span, exc.detector, exc.reason, exc.evidence, mode)
    else:
        span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"[:256]))
