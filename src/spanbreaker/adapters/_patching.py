"""The lifecycle shared by adapters that only patch their framework (no instrumentor of their own to switch on).

Such an adapter waits for the application to import the framework (:mod:`._deferred`), checks that the framework's
internals are the ones its patches were written for, and patches once; on another release it undoes whatever it
patched and leaves the framework as it is, with a warning saying what then goes unguarded. ``uninstrument`` undoes
the patches. Each adapter says which module's import instruments and what it patches.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from typing import Any

from ._deferred import Deferred
from .base import PatchLog

logger = logging.getLogger("spanbreaker")


class PatchingAdapter:
    """Subclasses set ``name``, ``framework`` (the module whose import instruments), ``title`` and ``unguarded`` (for
    the warning: what the framework is called, what goes without the patches), and implement :meth:`patch`."""

    name: str
    framework: str
    title: str
    unguarded: str

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._patches = PatchLog()
        self._deferred = Deferred(self.framework)

    def patch(self, patches: PatchLog) -> None:
        """Check the framework's internals (raise on an unexpected release) and add the patches (called once per
        instrumenting, under the lock, the framework imported)."""
        raise NotImplementedError

    def available(self) -> bool:
        try:
            return importlib.util.find_spec(self.framework) is not None
        except (ImportError, ValueError):
            return False

    def instrument(self, tracer_provider: Any, processor: Any) -> None:
        """Patch the framework, now or when the application imports it (idempotent). Its spans stay on the provider
        the framework uses: the breaker sees them where it is attached there (``spanbreaker.instrument()``, the
        launcher)."""
        self._deferred.run_or_defer(self._instrument)

    def _instrument(self) -> None:
        with self._lock:
            if self._patches:
                return
            try:
                self.patch(self._patches)
            except Exception:  # another release: it runs as it is, unguarded by these patches
                self._patches.undo()
                logger.warning("spanbreaker could not instrument %s: %s", self.title, self.unguarded, exc_info=True)

    def uninstrument(self) -> None:
        self._deferred.cancel()
        with self._lock:
            self._patches.undo()
