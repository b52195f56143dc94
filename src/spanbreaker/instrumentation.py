"""``spanbreaker.instrument()``: attach the breaker to a tracer provider and instrument installed frameworks.

One call, idempotent per provider. Works with the global provider or one passed in, including a provider that
someone else already set up (Phoenix's ``register()``, Agno's ``setup_tracing``, a vendor SDK): the breaker is
appended as one more span processor next to theirs.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
import threading
import weakref
from collections.abc import Iterable
from typing import Any

from opentelemetry import trace

from . import coverage
from .adapters import ADAPTER_MODULES, SHARED_MODULES
from .config import BreakerConfig
from .processor import BreakerSpanProcessor

logger = logging.getLogger("spanbreaker")

_attached: weakref.WeakKeyDictionary[Any, BreakerSpanProcessor] = weakref.WeakKeyDictionary()
_lock = threading.RLock()
_instrumented: dict[str, Any] = {}
_pending: dict[str, Any] = {}


def _is_sdk_provider(provider: Any) -> bool:
    return hasattr(provider, "add_span_processor")


def _unwrapped(provider: Any) -> Any:
    """The provider the breaker attaches to: ``provider``, or the SDK provider inside a wrapper that cannot be a
    dictionary key. Pydantic Logfire's global ``ProxyTracerProvider`` is a dataclass (unhashable) around the SDK
    provider it delegates to (``.provider``): attached through it, the breaker is on that SDK provider."""
    try:
        hash(provider)
    except TypeError:
        inner = getattr(provider, "provider", None)
        if inner is not None and _is_sdk_provider(inner):
            return inner
        raise
    return provider


def attach(tracer_provider: Any, config: BreakerConfig | None = None,
           processor: BreakerSpanProcessor | None = None) -> BreakerSpanProcessor:
    """Add one BreakerSpanProcessor to ``tracer_provider`` (once); return the one attached.

    ``processor``: the one to add (the launcher hook builds it before any provider exists), else a new one.
    """
    with _lock:
        tracer_provider = _unwrapped(tracer_provider)
        existing = _attached.get(tracer_provider)
        if existing is not None:
            return existing
        if processor is None:
            processor = BreakerSpanProcessor(config)
        _add_processor(tracer_provider, processor)
        _attached[tracer_provider] = processor
        return processor


def _add_processor(tracer_provider: Any, processor: BreakerSpanProcessor) -> None:
    """Append the breaker without displacing the provider's own exporter.

    Phoenix's ``TracerProvider`` (``phoenix.otel.register()``) removes and shuts down its exporting processor
    when another one is added, unless told ``replace_default_processor=False``: a plain ``add_span_processor``
    would silently stop the application's traces from reaching Phoenix.
    """
    try:
        keeps_default = "replace_default_processor" in inspect.signature(tracer_provider.add_span_processor).parameters
    except (TypeError, ValueError):
        keeps_default = False
    if keeps_default:
        tracer_provider.add_span_processor(processor, replace_default_processor=False)
    else:
        tracer_provider.add_span_processor(processor)


def processor_for(tracer_provider: Any = None) -> BreakerSpanProcessor | None:
    """The breaker attached to a provider (the global one by default), if any."""
    provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
    return _attached.get(_unwrapped(provider))


def instrument(tracer_provider: Any = None, config: BreakerConfig | None = None, *,
               create_provider: bool = True, frameworks: Iterable[str] | None = None) -> BreakerSpanProcessor | None:
    """Attach the breaker and instrument every supported framework that is installed.

    Args:
        tracer_provider: an SDK ``TracerProvider``; the global one when omitted.
        config: the breaker configuration; loaded from ``SPANBREAKER_*`` / ``SPANBREAKER_CONFIG`` when omitted.
        create_provider: when no SDK provider is set globally, create one (with attribute limits high enough
            for agent spans) and make it global. With False, attach later, when the application sets its own
            provider (what the ``opentelemetry-instrument`` hook does).
        frameworks: adapter names to instrument (``"smolagents"``, ``"agno"``, ``"beeai"``, ``"langchain"``
            for LangChain and LangGraph, ``"openai_agents"``, ``"pydantic_ai"``,
            ``"llama_index"``, ``"crewai"``, ``"strands"``, ``"litellm"``, ``"bedrock"`` for boto3's
            ``bedrock-runtime`` client, ``"groq"``, ``"mistralai"``, ``"ollama"`` for those clients' OpenInference
            instrumentors, ``"autogen"``, ``"dspy"``, ``"haystack"``, ``"agent_framework"``,
            ``"google_adk"``, ``"semantic_kernel"``, ``"openai_v2"`` for OpenTelemetry's own OpenAI instrumentation, and
            ``"openllmetry_openai"``, ``"openllmetry_anthropic"``, ``"openllmetry_langchain"``,
            ``"openllmetry_openai_agents"``, ``"openllmetry_llama_index"``, ``"openllmetry_groq"``,
            ``"openllmetry_ollama"``, ``"openllmetry_google_genai"``, ``"openllmetry_bedrock"`` for OpenLLMetry's, and
            ``"traceloop_sdk"`` for the Traceloop SDK's decorators, ``"langfuse"`` for Langfuse's SDK,
            ``"openlit_openai"``, ``"openlit_anthropic"``, ``"openlit_groq"``, ``"openlit_ollama"``,
            ``"openlit_google_genai"`` for OpenLIT's); all installed ones when omitted.
            Instrumenting a framework imports it, and some are slow to import: an application using one framework
            need not pay for the others it happens to have installed.

    Returns the attached processor, or None when attaching was deferred.
    """
    with _lock:
        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        if not _is_sdk_provider(provider):
            if not create_provider:
                _defer_until_provider_is_set(config, frameworks)
                return None
            from opentelemetry.sdk.trace import SpanLimits, TracerProvider

            provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
            trace.set_tracer_provider(provider)
            provider = trace.get_tracer_provider()
        return guard(provider, config, frameworks)


def guard(provider: Any, config: BreakerConfig | None, frameworks: Iterable[str] | None,
          processor: BreakerSpanProcessor | None = None) -> BreakerSpanProcessor:
    """Attach the breaker (``processor`` when given) to ``provider`` and instrument the frameworks (once each).

    ``provider`` may also be the global proxy provider: the adapters' tracers then follow whichever provider
    becomes global, like every instrumentor's (what the launcher hook does before the SDK is set up).
    """
    with _lock:
        if _is_sdk_provider(provider):
            processor = attach(provider, config, processor)
        elif processor is None:
            processor = BreakerSpanProcessor(config)
        _instrument_frameworks(provider, processor, None if frameworks is None else frozenset(frameworks))
        return processor


def _instrument_frameworks(provider: Any, processor: BreakerSpanProcessor, only: frozenset[str] | None) -> None:
    for module_name in ADAPTER_MODULES:
        if module_name in _instrumented:
            continue
        if only is not None and module_name.rsplit(".", 1)[-1] not in only and module_name not in SHARED_MODULES:
            continue
        try:
            adapter = importlib.import_module(module_name).ADAPTER
        except ImportError:
            continue
        try:
            if not adapter.available():
                continue
            adapter.instrument(provider, processor)
            _instrumented[module_name] = adapter
            coverage.instrumented.add(adapter.name)
        except Exception:  # a framework's instrumentation failing must not take the application down
            logger.warning("spanbreaker could not instrument %s", module_name, exc_info=True)


def uninstrument() -> None:
    """Undo framework instrumentation (processors stay attached: the SDK cannot remove them)."""
    with _lock:
        for module_name, adapter in list(_instrumented.items()):
            try:
                adapter.uninstrument()
            except Exception:
                logger.warning("spanbreaker could not uninstrument %s", module_name, exc_info=True)
            _instrumented.pop(module_name, None)
            coverage.instrumented.discard(module_name.rsplit(".", 1)[-1])


def _defer_until_provider_is_set(config: BreakerConfig | None, frameworks: Iterable[str] | None = None,
                                 processor: BreakerSpanProcessor | None = None) -> None:
    """Wrap ``trace.set_tracer_provider`` so the breaker (``processor`` when given) attaches to whatever provider
    the app sets."""
    _pending["config"] = config
    _pending["frameworks"] = None if frameworks is None else frozenset(frameworks)
    _pending["processor"] = processor
    original = trace.set_tracer_provider
    if getattr(original, "_spanbreaker", False):
        return

    @functools.wraps(original)
    def set_tracer_provider(tracer_provider: Any) -> None:
        original(tracer_provider)
        try:
            provider = trace.get_tracer_provider()
            if _is_sdk_provider(provider):
                guard(provider, _pending.get("config"), _pending.get("frameworks"), _pending.get("processor"))
        except Exception:
            logger.warning("spanbreaker could not attach to the new tracer provider", exc_info=True)

    set_tracer_provider._spanbreaker = True  # type: ignore[attr-defined]
    trace.set_tracer_provider = set_tracer_provider
