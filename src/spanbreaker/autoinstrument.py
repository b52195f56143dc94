"""The ``opentelemetry_pre_instrument`` hook: ``opentelemetry-instrument python app.py`` attaches the breaker.

It runs after the distro and configurator, so the global provider is already the SDK one when a configurator
is installed; otherwise attaching waits until the application sets a provider. It never aborts start-up: a
missing framework is skipped; only an invalid spanbreaker configuration is reported, loudly, on stderr.
"""

from __future__ import annotations

import logging
import os

logger = logging.getLogger("spanbreaker")


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
    from .config import BreakerConfig
    from .errors import ConfigError
    from .instrumentation import instrument

    try:
        config = BreakerConfig.load()
    except ConfigError as exc:
        logger.error("spanbreaker is not attached: %s", exc)
        raise
    try:
        instrument(config=config, create_provider=False, frameworks=frameworks)
    except Exception:
        logger.warning("spanbreaker could not attach", exc_info=True)
