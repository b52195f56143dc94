"""Langfuse's Python SDK (3 and later, on OpenTelemetry): an observation's span starts saying what it is, and a tool
observation's input is known to the breaker as its span starts, whatever Langfuse's masking does to the span.

``@observe(as_type="tool")``, ``start_as_current_observation`` and ``start_observation`` (what ``@observe`` and
Langfuse's OpenAI integration use) start a bare span and then set its type and input on it (measured on langfuse 5.0.4:
``conventions/langfuse.py``). The breaker decides at start, so stock a looping tool was no call to it: no tool budget
counted it and no repeat was read, and a generation counted against no model-call budget.

Here the span starts with its type (the SDK's tracer behind :class:`~spanbreaker.adapters.base.StartAttributes`); a
tool observation's input, serialised as Langfuse serialises it, is shown to the breaker in process
(:mod:`spanbreaker.private_calls`), so nothing but the type, which the SDK sets at once anyway, is added to the span:
an application's ``mask`` still decides what the span carries. With ``@observe(capture_input=False)`` the call is read
from the decorator's wrapper frame instead, for the breaker only. The output is read from the span at its end (Langfuse
records a decorated function's return value); with ``@observe(capture_output=False)`` it is read from the wrapper's
frame as the wrapper ends the span, for the breaker only. ``@observe`` ends its span on any exception, a trip included:
nothing to repair.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import logging
import sys
from typing import Any

from ..conventions import langfuse as lf
from ..private_calls import PrivateCall, shown
from ._patching import PatchingAdapter
from .base import PatchLog, PendingAttributes, StartAttributes

logger = logging.getLogger("spanbreaker")

CLIENT = "langfuse._client.client"
ATTRIBUTES = "langfuse._client.attributes"
STARTS = {"start_observation": ("span", False),
          "_start_as_current_otel_span_with_processed_media": ("generation", True)}
"""The client's methods that start an observation's span: the type each gives one whose ``as_type`` is not said, and
whether it returns a context manager (the span then starts as the ``with`` block is entered)."""
OBSERVE = "langfuse._client.observe"
OBSERVE_WRAPPERS = frozenset({"sync_wrapper", "async_wrapper"})
"""``@observe``'s wrappers, whose frame holds the decorated function's call when its span starts."""
_PENDING = PendingAttributes("spanbreaker_langfuse_start")


def _serialized(value: Any) -> str | None:
    """An input as Langfuse writes it on the span (its own serialiser)."""
    serialize = getattr(importlib.import_module(ATTRIBUTES), "_serialize", None)
    text = serialize(value) if serialize is not None else None
    return text if isinstance(text, str) else None


def _is_observe_wrapper(frame: Any) -> bool:
    """Whether ``frame`` runs one of ``@observe``'s wrappers (whose locals hold the decorated function's call)."""
    return frame.f_code.co_name in OBSERVE_WRAPPERS and frame.f_globals.get("__name__") == OBSERVE


def _uncaptured(frame: Any) -> str | None:
    """The call of an ``@observe(capture_input=False)`` function, from the decorator's wrapper frame (one of the few
    above ``frame``): its arguments as ``@observe`` would record them, for the breaker only (the span stays without
    them). None when no such wrapper is there."""
    for _ in range(4):
        if frame is None:
            return None
        if _is_observe_wrapper(frame):
            local = frame.f_locals
            args, kwargs, function = local.get("args"), local.get("kwargs"), local.get("func")
            if not isinstance(args, tuple) or not isinstance(kwargs, dict):
                return None
            try:
                parameters = inspect.signature(function).parameters
            except (TypeError, ValueError):
                parameters = {}  # type: ignore[assignment]
            if args and ("self" in parameters or "cls" in parameters):  # as @observe leaves the instance out
                args = args[1:]
            return _serialized({"args": args, "kwargs": kwargs})
        frame = frame.f_back
    return None


def _uncaptured_output(frame: Any) -> str | None:
    """The return value of an ``@observe(capture_output=False)`` function, from the decorator's wrapper frame that is
    ending its span (``frame``), serialised as ``@observe`` would have recorded it; None for any other caller, a
    function that raised, or a generator (its span ends when it is exhausted, elsewhere)."""
    if frame is None or not _is_observe_wrapper(frame):
        return None
    local = frame.f_locals
    if local.get("capture_output") is not False or "result" not in local or local.get("is_return_type_generator"):
        return None
    return _serialized(local["result"])


def _shows_output(observation: Any, name: str) -> Any:
    """``observation``, its ``end()`` showing the breaker the tool's return value where ``@observe`` keeps it off the
    span (``capture_output=False``): the result of the call, for the breaker only, so a repeat is still one."""
    end = getattr(observation, "end", None)
    if not callable(end):
        return observation

    def end_showing_output(*args: Any, **kwargs: Any) -> Any:
        output = None
        try:
            output = _uncaptured_output(sys._getframe(1))
        except Exception:  # an odd frame: the span ends as the SDK ends it
            logger.debug("spanbreaker could not read a Langfuse tool's output", exc_info=True)
        if output is None:
            return end(*args, **kwargs)
        with shown(PrivateCall(name, None, output, arguments_key=lf.INPUT, result_key=lf.OUTPUT)):
            return end(*args, **kwargs)

    with contextlib.suppress(AttributeError, TypeError):  # an observation taking no attribute: its output stays unknown
        observation.end = end_showing_output
    return observation


def _start(attributes: dict[str, Any] | None, call: PrivateCall | None, start: Any) -> Any:
    """``start()`` (which starts the span) with ``attributes`` pending for it and ``call`` shown."""
    token = _PENDING.var.set(attributes)
    try:
        if call is None:
            return start()
        with shown(call):
            return start()
    finally:
        _PENDING.var.reset(token)


class _StartsOnEnter:
    """A context manager whose span starts as the ``with`` block is entered: entered with the start attributes pending
    and the call shown; everything else is the manager's own."""

    def __init__(self, manager: Any, attributes: dict[str, Any] | None, call: PrivateCall | None,
                 tool: str | None) -> None:
        self.manager = manager
        self.attributes = attributes
        self.call = call
        self.tool = tool
        """The tool's name, for a tool observation: its output is shown where ``@observe`` keeps it off the span."""

    def __enter__(self) -> Any:
        entered = _start(self.attributes, self.call, self.manager.__enter__)
        return entered if self.tool is None else _shows_output(entered, self.tool)

    def __exit__(self, *exc: Any) -> Any:
        return self.manager.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.manager, name)


def _starting(default_type: str, on_enter: bool) -> Any:
    def wrapper(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Around a method that starts an observation's span: the span starts with its type; a tool's input shown."""
        call: PrivateCall | None = None
        attributes: dict[str, Any] | None = None
        tool: str | None = None
        try:
            observation = kwargs.get("as_type") or default_type
            if observation in lf.KINDS:
                attributes = {lf.TYPE: observation}
                tracer = getattr(instance, "_otel_tracer", None)
                if tracer is not None and not isinstance(tracer, StartAttributes):
                    instance._otel_tracer = StartAttributes(tracer, _PENDING)
                if observation == lf.GENERATION and kwargs.get("input") is not None:
                    # the request, set on the span just after it starts (through the app's mask): the prompt a loop
                    # around the model client is read from, shown for the breaker only
                    request = _serialized(kwargs["input"])
                    if request is not None:
                        call = PrivateCall("", None, prompt={lf.TYPE: lf.GENERATION, lf.INPUT: request})
                if observation == lf.TOOL:
                    value = kwargs.get("input")
                    arguments = _serialized(value) if value is not None else _uncaptured(sys._getframe(1))
                    name = kwargs.get("name")
                    if isinstance(name, str):
                        tool = name
                        if arguments is not None:
                            call = PrivateCall(name, arguments, arguments_key=lf.INPUT, result_key=lf.OUTPUT)
        except Exception:  # an odd call: the span starts as the SDK makes it
            logger.debug("spanbreaker could not read a Langfuse observation at start", exc_info=True)
            attributes, call, tool = None, None, None
        if on_enter:
            return _StartsOnEnter(wrapped(*args, **kwargs), attributes, call, tool)
        return _start(attributes, call, lambda: wrapped(*args, **kwargs))

    return wrapper


class LangfuseAdapter(PatchingAdapter):
    name = "langfuse"
    framework = CLIENT
    title = "Langfuse's SDK"
    unguarded = "Langfuse's tool, agent and generation observations are no calls to the breaker"

    def patch(self, patches: PatchLog) -> None:
        client = importlib.import_module(CLIENT).Langfuse
        missing = [method for method in STARTS if not callable(getattr(client, method, None))]
        if missing or not callable(getattr(importlib.import_module(ATTRIBUTES), "_serialize", None)):
            raise RuntimeError(f"{CLIENT}.Langfuse has no {missing or '_serialize'}")
        for method, (default_type, on_enter) in STARTS.items():
            patches.wrap(client, method, _starting(default_type, on_enter))


ADAPTER = LangfuseAdapter()
