"""Instrument a framework when the application imports it, not before.

``spanbreaker.instrument()`` (and ``opentelemetry-instrument``) instruments every installed framework. Importing
the OpenAI Agents SDK takes seconds (it pulls in the OpenAI client and MCP); an application that has it
installed but does not use it should not pay that at start-up. So an adapter whose framework is not imported yet
registers a post-import hook (``wrapt``'s, the mechanism OpenTelemetry's own instrumentations build on) and does
its work when the framework is first imported; a framework already imported is instrumented at once.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

logger = logging.getLogger("spanbreaker")


class Deferred:
    """At most one pending ``action`` per adapter; ``cancel()`` makes a pending one a no-op."""

    def __init__(self, module: str) -> None:
        self.module = module
        self._lock = threading.Lock()
        self._action: Callable[[], None] | None = None
        self._hooked = False

    def run_or_defer(self, action: Callable[[], None]) -> None:
        if self.module in sys.modules:
            action()
            return
        with self._lock:
            self._action = action
            if self._hooked:
                return
            self._hooked = True
        from wrapt import register_post_import_hook

        register_post_import_hook(self._imported, self.module)

    def cancel(self) -> None:
        with self._lock:
            self._action = None

    def _imported(self, module: Any) -> None:
        with self._lock:
            action, self._action = self._action, None
        if action is None:
            return
        try:
            action()
        except Exception:  # instrumenting must never break the application's import
            logger.warning("spanbreaker could not instrument %s", self.module, exc_info=True)


def being_imported(package: str) -> bool:
    """True while a module of ``package`` is still executing its import (partially initialised).

    ``opentelemetry-instrument`` loads every installed instrumentor; one that imports its framework fires our
    post-import hook half-way through its own import, and instrumenting it from the hook then fails with a
    circular ImportError. The launcher is instrumenting it at that moment anyway (on the global provider, which
    carries the breaker), so the adapter can stand aside."""
    prefix = package + "."
    for name, module in list(sys.modules.items()):
        if (name == package or name.startswith(prefix)) and getattr(
                getattr(module, "__spec__", None), "_initializing", False):
            return True
    return False
