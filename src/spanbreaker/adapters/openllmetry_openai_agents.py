"""OpenLLMetry's OpenAI Agents instrumentation (Traceloop's ``opentelemetry-instrumentation-openai-agents``): a function
call's arguments and result reach the breaker as the call starts and ends, whatever content tracing says.

The instrumentor adds a trace processor to the SDK that starts an OpenTelemetry span as each SDK span starts (measured
on 0.62.4 with openai-agents 0.20 and 0.24): an agent span (``invoke_agent``), a model call (``openai.response``,
``chat``) and a function call (``<tool>.tool``, ``execute_tool`` with ``gen_ai.tool.name``) all say what they are at
start, and a ``Tripped`` raised by the breaker passes the instrumentor's and the SDK's handlers (they catch
``Exception``) and comes out of ``Runner.run``. But a call's arguments and result are set only as its span ends,
and only with the SDK's sensitive data and OpenLLMetry's content tracing on (``TRACELOOP_TRACE_CONTENT``): stock, a
looping agent ran 5 identical calls and the next model call was vetoed; with either off, 30 of 30 ran to the turn
limit.

Here the SDK's own tool execution shows each call in process (:mod:`._agents_sdk`, shared with OpenInference's
instrumentor's adapter): the fifth identical call is vetoed before it runs, with content tracing on or off, and
nothing is added to the spans. A steer raised where the call's span starts is kept for the call
(:func:`~._agents_sdk.keep_steer` around the processor's ``_start_function_span``: its ``on_span_start`` would log and
swallow it), and the call returns the steer's message without running.

With the SDK's Chat Completions model (``OpenAIChatCompletionsModel``, and every provider reached through it) the
instrumentor records no token usage: it reads the usage from the SDK span's ``response``, which the model's
``GenerationSpanData`` does not have (it carries ``usage`` itself), so token and cost budgets never saw those calls.
The usage the SDK recorded is put on the span as the instrumentor puts a response's (``gen_ai.usage.input_tokens``
and ``.output_tokens``) when the span ends (:func:`_usage_at_end`).

The instrumentor itself is the application's to switch on (``OpenAIAgentsInstrumentor().instrument()``,
``Traceloop.init()`` or the launcher); this adapter only patches, when the instrumentor's package is imported.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

from ..conventions import genai as ga
from ._agents_sdk import TOOL_CALLS, keep_steer
from ._patching import PatchingAdapter
from .base import PatchLog

PACKAGE = "opentelemetry.instrumentation.openai_agents"
HOOKS = "opentelemetry.instrumentation.openai_agents._hooks"
logger = logging.getLogger("spanbreaker")


def _usage_at_end(wrapped: Any, processor: Any, args: Any, kwargs: Any) -> Any:
    """Around the processor's ``_end_generation_span(otel_span, span_data, trace_content)``: a model call without a
    ``response`` (Chat Completions) gets the token usage its SDK span recorded, as a response's would have given."""
    result = wrapped(*args, **kwargs)
    try:
        span = args[0] if args else kwargs.get("otel_span")
        data = args[1] if len(args) > 1 else kwargs.get("span_data")
        usage = getattr(data, "usage", None)
        if getattr(data, "response", None) is None and isinstance(usage, dict) and span.is_recording():
            for key, attribute in (("input_tokens", ga.INPUT_TOKENS), ("output_tokens", ga.OUTPUT_TOKENS)):
                value = usage.get(key)
                if type(value) is int and value >= 0:
                    span.set_attribute(attribute, value)
    except Exception:  # an odd span: its usage stays unknown
        logger.debug("spanbreaker could not read an OpenAI Agents model call's usage", exc_info=True)
    return result


class OpenLLMetryOpenAIAgentsAdapter(PatchingAdapter):
    name = "openllmetry_openai_agents"
    framework = PACKAGE
    title = "OpenLLMetry's OpenAI Agents instrumentation"
    unguarded = ("a function call is decided as its span ends, and with TRACELOOP_TRACE_CONTENT=false or the SDK's "
                 "sensitive data off no function call is read")

    def patch(self, patches: PatchLog) -> None:
        processor = importlib.import_module(HOOKS).OpenTelemetryTracingProcessor
        missing = [name for name in ("_start_function_span", "_end_generation_span")
                   if not callable(getattr(processor, name, None))]
        if missing:
            raise RuntimeError(f"OpenTelemetryTracingProcessor has no {missing}")
        TOOL_CALLS.hold(self.name, patches)
        patches.wrap(processor, "_start_function_span", keep_steer)
        patches.wrap(processor, "_end_generation_span", _usage_at_end)


ADAPTER = OpenLLMetryOpenAIAgentsAdapter()
