"""OpenInference's hidden values: the breaker knows what a span would have said, whatever the ``TraceConfig`` hides.

Every OpenInference instrumentor (smolagents, Agno, CrewAI, LlamaIndex, LangChain, the OpenAI Agents SDK, DSPy,
BeeAI, the OpenAI, LiteLLM and Bedrock clients...) traces through ``OITracer``, which masks a span's values by its
``TraceConfig``: with ``hide_inputs`` / ``hide_outputs`` (or ``OPENINFERENCE_HIDE_INPUTS`` / ``..._OUTPUTS``) a tool
span carries ``__REDACTED__`` for its arguments and its result, an agent span for its task and its answer, and a model
span no prompt. That is right for what leaves the process, but then every call is unknown to the breaker and no loop
is caught: only the budgets stop it.

Here ``OITracer.start_span``, for a tracer whose config hides something, shows the breaker the values as the
instrumentor gave them, before masking (:mod:`spanbreaker.private_calls`, under the keys the span would have carried
them): a model call's start attributes (its prompt) while its span starts; a tool call's or an agent run's input while
its span starts, and input and output while it ends, through a proxy (:class:`ShownSpan`) that keeps them as the
instrumentor sets them. The spans get exactly what the instrumentor gave them; what leaves the process of a hidden
value is what leaves of any, a trip's evidence naming a call by its fingerprint. A tracer whose config hides nothing
goes through as it did. Checked against the ``openinference-instrumentation`` it meets first: on a release whose
internals differ, the adapter logs a warning and leaves it as it is (hidden values are then unknown, as before).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping
from typing import Any

import wrapt

from ..conventions import openinference as oi
from ..conventions.read import agent_name, tool_name
from ..private_calls import PrivateCall, shown
from ._patching import PatchingAdapter
from .base import PatchLog

logger = logging.getLogger("spanbreaker")

START_SPAN = ("self", "name", "context", "kind", "attributes")
"""``OITracer.start_span``'s leading parameters: where a positional ``attributes`` is."""
_ATTRIBUTES_AT = START_SPAN.index("attributes") - 1  # in ``args``, after ``self``
_TOOL, _LLM, _AGENT = "TOOL", "LLM", "AGENT"
_NAMED_BY = {_TOOL: tool_name, _AGENT: agent_name}
"""The kinds whose values are shown, and how the breaker names the call (a tool) or the run (an agent)."""


def _text(value: Any) -> str | None:
    """A value as the span would have carried it; None for a lazy one (a callable: the instrumentor's to resolve)."""
    if value is None or callable(value):
        return None
    return value if isinstance(value, str) else str(value)


HIDING = ("hide_inputs", "hide_outputs", "hide_input_messages", "hide_input_text")
"""The ``TraceConfig`` switches that keep a call's values or a model call's prompt off the spans."""


def _hides(config: Any) -> bool:
    """Whether a tracer's config hides anything (every OpenInference span asks: its fields, read inline)."""
    return bool(config.hide_inputs or config.hide_outputs or config.hide_input_messages or config.hide_input_text)


def _kind(attributes: Mapping[str, Any], openinference_span_kind: Any) -> str | None:
    """The span's OpenInference kind at start, upper case, or None while it has none (LangChain's instrumentor sets
    it when the run ends; its adapter gives it at start)."""
    value = openinference_span_kind if openinference_span_kind is not None else attributes.get(oi.SPAN_KIND)
    value = getattr(value, "value", value)
    return str(value).upper() if value is not None else None


class ShownSpan(wrapt.ObjectProxy):  # type: ignore[misc,type-arg,unused-ignore]
    """An OpenInference tool or agent span whose values, as the instrumentor sets them before masking, are kept, and
    shown to the breaker while the span ends. Everything passes on to the instrumentor's own span."""

    def __init__(self, wrapped: Any, call: PrivateCall) -> None:
        super().__init__(wrapped)
        self._self_call = call

    def _self_keep(self, key: str, value: Any) -> None:
        try:
            if key == oi.INPUT:
                self._self_call.arguments = _text(value)
            elif key == oi.OUTPUT:
                self._self_call.result = _text(value)
        except Exception:  # a value with no text (its __str__ raises): unknown, and the instrumentor goes on
            if key == oi.INPUT:
                self._self_call.arguments = None
            else:
                self._self_call.result = None

    def set_attribute(self, key: str, value: Any) -> None:
        self._self_keep(key, value)
        self.__wrapped__.set_attribute(key, value)

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        for key, value in attributes.items():
            self.set_attribute(key, value)

    def set_input(self, value: Any, *, mime_type: Any = None) -> None:
        from openinference.instrumentation import get_input_attributes

        self._self_keep(oi.INPUT, get_input_attributes(value, mime_type=mime_type).get(oi.INPUT))
        self.__wrapped__.set_input(value, mime_type=mime_type)

    def set_output(self, value: Any, *, mime_type: Any = None) -> None:
        from openinference.instrumentation import get_output_attributes

        self._self_keep(oi.OUTPUT, get_output_attributes(value, mime_type=mime_type).get(oi.OUTPUT))
        self.__wrapped__.set_output(value, mime_type=mime_type)

    def end(self, end_time: int | None = None) -> None:
        call = self._self_call
        if call.arguments is None and call.result is None:  # nothing to show (an adapter's own showing stays)
            self.__wrapped__.end(end_time)
            return
        try:
            with shown(call):
                self.__wrapped__.end(end_time)
        finally:
            call.arguments = call.result = None  # read: a result of megabytes is not kept with the span


def _showing(original: Callable[..., Any]) -> Callable[..., Any]:
    """``OITracer.start_span`` (``original``, the class's function) as :func:`_start_span` runs it. A plain function,
    not a ``wrapt`` wrapper: every OpenInference span goes through it, most with nothing hidden."""

    def start_span(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not _hides(self._self_config):
            return original(self, *args, **kwargs)
        return _start_span(original, self, args, kwargs)

    return start_span


def _start_span(original: Callable[..., Any], tracer: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``OITracer.start_span`` where the tracer's config hides values: a model call starts with its prompt shown; a
    tool or agent span with its input shown, and is handed out as a :class:`ShownSpan`."""
    try:
        kind, call = _to_show(args, kwargs)
    except Exception:  # odd attributes: the span starts as the instrumentor made it, its hidden values unknown
        logger.debug("spanbreaker could not read an OpenInference span's start", exc_info=True)
        return original(tracer, *args, **kwargs)
    if call is None:
        return original(tracer, *args, **kwargs)
    if kind == _LLM or call.arguments is not None:  # else an adapter's own showing, if any, stays in view
        with shown(call):
            span = original(tracer, *args, **kwargs)
    else:
        span = original(tracer, *args, **kwargs)
    return span if kind == _LLM else ShownSpan(span, call)


def _to_show(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str | None, PrivateCall | None]:
    """The span's kind at start and what to show the breaker of it: a model call's start attributes (its prompt), a
    tool call's or an agent run's input and output so far; None for any other span."""
    attributes = kwargs.get("attributes") if "attributes" in kwargs else (
        args[_ATTRIBUTES_AT] if len(args) > _ATTRIBUTES_AT else None)
    if not isinstance(attributes, Mapping):
        attributes = {}
    kind = _kind(attributes, kwargs.get("openinference_span_kind"))
    if kind == _LLM:  # its prompt, for a loop around a model client (read from the prompt: no tool spans)
        return kind, PrivateCall("", None, prompt=attributes)
    named_by = _NAMED_BY.get(kind or "")
    if named_by is None:  # another kind, or none yet: the breaker judges a span by what it said at start
        return kind, None
    name = str(kwargs.get("name", args[0] if args else ""))
    return kind, PrivateCall(named_by(name, attributes), _text(attributes.get(oi.INPUT)),
                             _text(attributes.get(oi.OUTPUT)), arguments_key=oi.INPUT, result_key=oi.OUTPUT)


class OpenInferenceAdapter(PatchingAdapter):
    name = "openinference"
    framework = "openinference.instrumentation"
    title = "OpenInference's hidden values"
    unguarded = "values an instrumentor hides (hide_inputs / hide_outputs) stay unknown to the breaker"

    def patch(self, patches: PatchLog) -> None:
        from openinference.instrumentation import OITracer, TraceConfig

        missing = [switch for switch in HIDING if switch not in TraceConfig.__dataclass_fields__]
        if missing:
            raise RuntimeError(f"TraceConfig has no {missing}")

        parameters = tuple(inspect.signature(OITracer.start_span).parameters)
        if parameters[:len(START_SPAN)] != START_SPAN or "openinference_span_kind" not in parameters:
            raise RuntimeError(f"OITracer.start_span takes {parameters}, not {START_SPAN} ... openinference_span_kind")
        patches.patch(OITracer, "start_span", _showing(vars(OITracer)["start_span"]))


ADAPTER = OpenInferenceAdapter()
