"""Shared breaker state across processes (``BreakerConfig.state = "redis://..."``)."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError


def attach_shared_state(processor: Any) -> None:
    """Attach the shared-state client named by ``processor.config.state`` to the processor."""
    raise ConfigError(f"state={processor.config.state!r}: shared state is not available in this build")
