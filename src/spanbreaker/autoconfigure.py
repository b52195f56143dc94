"""The launcher hook when no configurator set up the SDK: guard now, set the SDK up from ``OTEL_*`` if the app won't.

Why: ``opentelemetry-instrument`` configures the SDK only through an ``opentelemetry_configurator`` entry point,
which ``opentelemetry-distro`` provides and ``pip install spanbreaker[...]`` does not. Without one there is no
``TracerProvider``: no span is ever recorded, and a breaker has nothing to watch. Two kinds of application run
like that, and which one this is shows only once it runs:

* one that sets its own provider (Phoenix's ``register()``, Agno's ``setup_tracing``, a hand-made one): the
  breaker joins that provider when it is set (:func:`spanbreaker.instrumentation._defer_until_provider_is_set`);
* one that sets none (the README's no-code path): when its first span starts and still no provider is set, the
  SDK is configured from the standard ``OTEL_*`` variables by the SDK's own configurator (what the distro's
  configurator runs, without the distro's OTLP defaults) and the breaker attached, before that span starts.

Until then the breaker and the framework adapters sit on the global proxy provider: their tracers, like every
instrumentor's, are ``ProxyTracer`` objects that follow whichever provider becomes global, so both kinds of
application get the whole guard. The first-span check wraps ``ProxyTracer.start_span`` and
``start_as_current_span`` and is removed as soon as any provider is set: it costs nothing afterwards.

An exporter named in ``OTEL_*_EXPORTER`` that is not installed is left out with a one-line hint; the rest of the
set-up, and the breaker, go on.
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
import os
from collections.abc import Callable, Iterable
from typing import Any

from opentelemetry import trace

from .config import BreakerConfig
from .instrumentation import _defer_until_provider_is_set, _is_sdk_provider, _lock, guard

logger = logging.getLogger("spanbreaker")

EXPORTER_VARIABLES = {"traces": "OTEL_TRACES_EXPORTER", "metrics": "OTEL_METRICS_EXPORTER",
                      "logs": "OTEL_LOGS_EXPORTER"}
_PACKAGES = {
    "otlp_proto_grpc": "opentelemetry-exporter-otlp-proto-grpc",
    "otlp_proto_http": "opentelemetry-exporter-otlp-proto-http",
    "zipkin_json": "opentelemetry-exporter-zipkin-json",
    "zipkin_proto": "opentelemetry-exporter-zipkin-proto-http",
    "prometheus": "opentelemetry-exporter-prometheus",
}
"""Exporter entry-point name -> the distribution that provides it (for the hint)."""
MIN_SPAN_ATTRIBUTES = 1024
"""Agent spans flatten every message into attributes; under the SDK default of 128 the ones the breaker reads are
evicted (``spanbreaker.instrument()`` raises its provider's limit the same way)."""

_hooked: dict[str, Any] = {}
_state: dict[str, Any] = {}


def guard_until_configured(config: BreakerConfig | None, frameworks: Iterable[str] = ()) -> None:
    """The launcher hook's path when the global provider is still the proxy (no configurator ran).

    ``config`` None (spanbreaker's own settings were bad): no breaker, but the SDK is still set up at the first
    span if the application sets no provider, so its other instrumentation records and exports as it would
    have with a configurator.
    """
    with _lock:
        if config is not None:
            frameworks = frozenset(frameworks)
            processor = guard(trace.get_tracer_provider(), config, frameworks)
            _state.update(config=config, frameworks=frameworks, processor=processor)
            _defer_until_provider_is_set(config, frameworks, processor)
        _hook_first_span()


def _hook_first_span() -> None:
    from opentelemetry.trace import ProxyTracer

    if _hooked:
        return
    for name in ("start_span", "start_as_current_span"):
        original = ProxyTracer.__dict__[name]
        _hooked[name] = original
        setattr(ProxyTracer, name, _checked(original))


def _checked(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def start(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _hooked:
            _ensure_provider()
        return original(self, *args, **kwargs)

    return start


def _unhook() -> None:
    from opentelemetry.trace import ProxyTracer

    for name, original in _hooked.items():
        setattr(ProxyTracer, name, original)
    _hooked.clear()


def _ensure_provider() -> None:
    """At a span's start: if nobody set a provider, set the SDK up now; attach the breaker to the provider."""
    try:
        with _lock:
            if not _hooked:
                return
            _unhook()
            provider = trace.get_tracer_provider()
            if not _is_sdk_provider(provider):
                provider = configure_sdk()
            if _is_sdk_provider(provider) and _state.get("processor") is not None:
                guard(provider, _state["config"], _state["frameworks"], _state["processor"])
    except Exception:  # the application's span must start whatever happens here
        logger.warning("spanbreaker could not set up OpenTelemetry; the application runs unguarded", exc_info=True)


def configure_sdk() -> Any:
    """Configure the SDK from ``OTEL_*`` with the SDK's own configurator; return the global tracer provider.

    A missing exporter is left out of its signal (one warning line each); if the configurator fails anyway, a
    bare provider keeps the breaker working and the failure is one warning line.
    """
    from opentelemetry.sdk._configuration import _OTelSDKConfigurator

    overrides = _without_missing_exporters()
    if "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT" not in os.environ and "OTEL_ATTRIBUTE_COUNT_LIMIT" not in os.environ:
        overrides["OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT"] = str(MIN_SPAN_ATTRIBUTES)
    saved = {name: os.environ.get(name) for name in overrides}
    os.environ.update(overrides)  # read only while the configurator runs; the application's values come back
    try:
        _OTelSDKConfigurator().configure(  # type: ignore[no-untyped-call]
            auto_instrumentation_version=_launcher_version())
    except Exception as exc:
        logger.warning("spanbreaker: OpenTelemetry could not be set up from the OTEL_* settings (%s: %s); spans "
                       "are not exported, the breaker still guards the run", type(exc).__name__, exc)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    provider = trace.get_tracer_provider()
    if not _is_sdk_provider(provider):
        from opentelemetry.sdk.trace import SpanLimits, TracerProvider

        trace.set_tracer_provider(TracerProvider(span_limits=SpanLimits(max_span_attributes=MIN_SPAN_ATTRIBUTES)))
        provider = trace.get_tracer_provider()
    return provider


def _without_missing_exporters() -> dict[str, str]:
    """``OTEL_*_EXPORTER`` values with the exporters that are not installed left out, for the signals that name one.

    The configurator would otherwise raise for the first missing one and set up nothing at all.
    """
    from opentelemetry.sdk._configuration import _get_exporter_names

    changes: dict[str, str] = {}
    for signal, variable in EXPORTER_VARIABLES.items():
        try:
            names = _get_exporter_names(signal)  # type: ignore[arg-type]
        except RuntimeError as exc:  # an OTLP protocol it does not know
            logger.warning("spanbreaker: %s: %s; %s are not exported", variable, exc, signal)
            changes[variable] = "none"
            continue
        if not names:
            continue
        available = {ep.name for ep in importlib.metadata.entry_points(group=f"opentelemetry_{signal}_exporter")}
        missing = [name for name in names if name not in available]
        if not missing:
            continue
        kept = [name for name in names if name in available]
        packages = " ".join(sorted({_PACKAGES.get(name, f"<the package providing {name!r}>") for name in missing}))
        logger.warning("spanbreaker: %s=%s needs %s, which is not installed (pip install %s); %s %s",
                       variable, os.environ.get(variable, ""), ", ".join(missing), packages, signal,
                       f"go to {', '.join(kept)} only" if kept else "are not exported")
        changes[variable] = ",".join(kept) or "none"
    return changes


def _launcher_version() -> str | None:
    try:
        return importlib.metadata.version("opentelemetry-instrumentation")
    except importlib.metadata.PackageNotFoundError:
        return None
