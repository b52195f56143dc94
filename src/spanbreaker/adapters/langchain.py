"""LangChain adapter (LangGraph included): the OpenInference LangChain instrumentor, its spans saying what they are
at start.

What this adapter fixes around (measured on langgraph 1.2 / langchain-core 1.7 / openinference-instrumentation-langchain
0.1.80):

* The instrumentor starts every span with no attributes at all and writes the kind, the tool name, the arguments
  and the token counts only when the run ends. A breaker decides at span start whether a call may run, so it
  saw only anonymous spans: a LangGraph agent looping on one tool ran to its recursion limit unseen. Here the
  instrumentor's tracer gets, at start, the attributes it would write at the end anyway and that are known
  then: ``openinference.span.kind`` (the instrumentor's own rule: ``agent`` in the run name, else the LangChain
  run type), and for tools ``tool.name`` and ``input.value`` (the call's arguments), for models and agents
  ``input.value``. Which values, from a LangChain run, is :func:`start_attributes`; the exported span is what
  the instrumentor makes, the same keys overwritten with the same values at the end.
* The stop needs no variant: LangChain's callback manager catches ``Exception`` around handlers, and LangGraph's
  retry policies and ``ToolNode`` error handling catch ``Exception`` too, so the ``BaseException``
  :class:`spanbreaker.Tripped` raised from the tool or model span's start leaves ``invoke`` / ``ainvoke`` /
  ``stream`` / ``astream`` before the call runs.
* A run vetoed at start never ends, and the instrumentor would keep it in its run map for good: it is dropped.

Everything framework-specific stays in this module; LangChain is imported only when instrumenting. Plain LangChain
(a runnable, an ``AgentExecutor``) goes through the same instrumentor and the same hook.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import threading
from collections.abc import Mapping
from typing import Any

from ..errors import Tripped

logger = logging.getLogger("spanbreaker")

SCOPE = "openinference.instrumentation.langchain"
"""Instrumentation scope of the instrumentor's spans."""

_RUN_KINDS = {"llm": "LLM", "chain": "CHAIN", "tool": "TOOL", "retriever": "RETRIEVER", "embedding": "EMBEDDING",
              "prompt": "CHAIN", "parser": "CHAIN"}
"""LangChain run types -> OpenInference span kind, as the instrumentor maps them (anything else is CHAIN)."""
_INPUT_CHARS = 1 << 20
"""Inputs serialised at start are cut here: the breaker reads bounded text anyway."""


def span_kind(run_type: Any, name: Any) -> str:
    """The OpenInference kind the instrumentor gives a run when it ends: AGENT when the run's name says
    ``agent`` (LangGraph's ``agent`` node), else the run type's kind."""
    if isinstance(name, str) and "agent" in name.lower():
        return "AGENT"
    return _RUN_KINDS.get(run_type.lower(), "CHAIN") if isinstance(run_type, str) else "CHAIN"


def input_text(inputs: Any) -> str | None:
    """A run's inputs as the instrumentor records them: a lone string as it is, anything else as JSON."""
    if not inputs:
        return None
    if isinstance(inputs, Mapping) and len(inputs) == 1:
        value = next(iter(inputs.values()))
        if isinstance(value, str):
            return value[:_INPUT_CHARS]
    try:
        text = json.dumps(inputs, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        text = str(inputs)
    return text[:_INPUT_CHARS]


def start_attributes(run_type: Any, name: Any, inputs: Any, serialized: Any = None) -> dict[str, str]:
    """The attributes a LangChain run's span gets at start: its kind, and what a breaker checks before the call
    (a tool's name and arguments, a model's or agent's input). Chains get their kind only (their input is the
    whole graph state, and nothing is decided on it)."""
    kind = span_kind(run_type, name)
    attributes = {"openinference.span.kind": kind}
    if kind == "TOOL":
        tool = serialized.get("name") if isinstance(serialized, Mapping) else None
        attributes["tool.name"] = tool if isinstance(tool, str) and tool else str(name)
    if kind in ("TOOL", "LLM", "AGENT"):
        text = input_text(inputs)
        if text is not None:
            attributes["input.value"] = text
    return attributes


# ----------------------------------------------------------------------------------------------- the hook
_pending = threading.local()
"""The start attributes of the run whose span is being started on this thread (set around ``_start_trace``)."""


class _StartAttributes:
    """Stands in for the instrumentor's tracer: ``start_span`` adds the pending run's start attributes, every
    other attribute is the tracer's own."""

    def __init__(self, tracer: Any) -> None:
        self.wrapped = tracer

    def start_span(self, *args: Any, **kwargs: Any) -> Any:
        extra = getattr(_pending, "attributes", None)
        if extra and len(args) < 4:  # the instrumentor passes everything by keyword
            given = kwargs.get("attributes")
            kwargs["attributes"] = {**extra, **given} if given else extra
        return self.wrapped.start_span(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def _hook(original: Any) -> Any:
    def _start_trace(self: Any, run: Any) -> None:
        try:
            attributes = start_attributes(run.run_type, run.name, run.inputs, run.serialized)
            if not isinstance(self._tracer, _StartAttributes):
                self._tracer = _StartAttributes(self._tracer)
        except Exception:  # an odd run: the span starts as the instrumentor makes it
            logger.debug("spanbreaker could not read a LangChain run at start", exc_info=True)
            attributes = None
        _pending.attributes = attributes
        try:
            original.__get__(self, type(self))(run)
        except Tripped:
            self.run_map.pop(str(run.id), None)  # vetoed: it never ends, the instrumentor would keep it
            raise
        finally:
            _pending.attributes = None

    _start_trace.__wrapped__ = original  # type: ignore[attr-defined]
    return _start_trace


class LangChainAdapter:
    """Named after the instrumentor's entry point (``langchain``), as every adapter is: naming it in
    ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` turns both off."""

    name = "langchain"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._instrumentor: Any = None
        self._owns_instrumentor = False
        self._original: Any = None

    def available(self) -> bool:
        try:
            return (importlib.util.find_spec("langchain_core") is not None
                    and importlib.util.find_spec("openinference.instrumentation.langchain") is not None)
        except (ImportError, ValueError):
            return False

    def instrument(self, tracer_provider: Any, processor: Any = None) -> None:
        """Instrument LangChain for ``tracer_provider`` (whose span processors include the breaker), idempotent.

        When the instrumentor is already on (the application instrumented LangChain itself), it is left as it is
        and only the start hook is added.
        """
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from openinference.instrumentation.langchain._tracer import OpenInferenceTracer

        with self._lock:
            if self._original is None:
                self._original = vars(OpenInferenceTracer)["_start_trace"]
                setattr(OpenInferenceTracer, "_start_trace", _hook(self._original))  # noqa: B010 (mypy: a method)
            if self._instrumentor is not None:
                return
            instrumentor = LangChainInstrumentor()
            self._owns_instrumentor = not instrumentor.is_instrumented_by_opentelemetry
            if self._owns_instrumentor:
                instrumentor.instrument(tracer_provider=tracer_provider)
            self._instrumentor = instrumentor

    def uninstrument(self) -> None:
        with self._lock:
            if self._original is not None:
                from openinference.instrumentation.langchain._tracer import OpenInferenceTracer

                setattr(OpenInferenceTracer, "_start_trace", self._original)  # noqa: B010
                self._original = None
            if self._instrumentor is not None:
                if self._owns_instrumentor and self._instrumentor.is_instrumented_by_opentelemetry:
                    self._instrumentor.uninstrument()
                self._instrumentor = None
                self._owns_instrumentor = False


ADAPTER = LangChainAdapter()
