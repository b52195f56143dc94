"""The ``opentelemetry_pre_instrument`` hook: ``opentelemetry-instrument python app.py`` attaches the breaker.

It runs after the distro and configurator, so the global provider is already the SDK one when a configurator
is installed; otherwise :mod:`spanbreaker.autoconfigure` guards the run on whatever provider the application
sets, or sets the SDK up from ``OTEL_*`` itself if the application sets none.

It never takes OpenTelemetry down with it. Anything it raises would end the launcher's start-up: every
instrumentor after it, the application's own included, would be skipped. So a missing framework is skipped,
and a bad spanbreaker setting is one error naming the variable, after which the application runs with its other
instrumentation intact but *without the breaker*. ``SPANBREAKER_STRICT=1`` refuses to start instead (exit
status 78, EX_CONFIG), for deployments where an unguarded agent must never run.
"""

from __future__ import annotations

import logging
import os
import sys

logger = logging.getLogger("spanbreaker")

STRICT_ENV = "SPANBREAKER_STRICT"
EXIT_CONFIG = 78
"""sysexits' EX_CONFIG: the exit status when strict and the breaker cannot be attached."""


def pre_instrument() -> None:
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return
    disabled = {name.strip() for name in os.environ.get("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS", "").split(",")}
    if "spanbreaker" in disabled or "*" in disabled:
        return
    from .adapters import ADAPTER_MODULES

    # A framework the user disabled for the launcher (by its instrumentor's entry-point name, which is also our
    # adapter's name) is not instrumented by us either, nor imported.
    frameworks = [name for name in (m.rsplit(".", 1)[-1] for m in ADAPTER_MODULES) if name not in disabled]
    from opentelemetry import trace

    from .autoconfigure import guard_until_configured
    from .config import BreakerConfig
    from .errors import ConfigError
    from .instrumentation import _is_sdk_provider, instrument

    configured = _is_sdk_provider(trace.get_tracer_provider())
    try:
        config = BreakerConfig.load()
    except ConfigError as exc:
        _not_attached(str(exc), configured)
        return
    try:
        if configured:
            instrument(config=config, frameworks=frameworks)
        else:
            guard_until_configured(config, frameworks)
    except Exception as exc:
        logger.debug("spanbreaker could not attach", exc_info=True)
        _not_attached(f"{type(exc).__name__}: {exc}", configured)


def strict() -> bool:
    return os.environ.get(STRICT_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _not_attached(reason: str, configured: bool) -> None:
    if strict():
        # Not an exception: the launcher catches those and goes on, and a SystemExit raised this early is a
        # "Fatal Python error". The message is the whole story, so it goes out before the process ends.
        sys.stderr.write(f"spanbreaker: {reason}\nspanbreaker: {STRICT_ENV} is set: refusing to start without "
                         "the breaker\n")
        sys.stderr.flush()
        os._exit(EXIT_CONFIG)
    logger.error("spanbreaker is not attached: %s. The application runs WITHOUT the breaker (its other "
                 "OpenTelemetry instrumentation is unaffected); set %s=1 to refuse to start instead.",
                 reason, STRICT_ENV)
    if not configured:  # what spanbreaker would have set up for the other instrumentation, it still does
        try:
            from .autoconfigure import guard_until_configured

            guard_until_configured(None)
        except Exception:
            logger.warning("spanbreaker could not set up OpenTelemetry", exc_info=True)
