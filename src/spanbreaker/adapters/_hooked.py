"""The lifecycle shared by adapters that patch a framework around its OpenInference instrumentor.

Such an adapter (LlamaIndex, CrewAI) waits for the application to import the framework (:mod:`._deferred`), adds
its patches once, and switches the instrumentor on unless the application already did (then it keeps the
application's, in whatever mode the application chose, and only adds the patches); ``uninstrument`` undoes the
patches and switches off only an instrumentor it switched on. Each adapter says which framework, which
instrumentor, and what it patches.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from typing import Any

from ._deferred import Deferred, being_imported
from .base import PatchLog


class HookedAdapter:
    """Subclasses set ``name``, ``framework`` (the module whose import instruments) and ``scope`` (the
    instrumentor's module), and implement :meth:`patch` and :meth:`make_instrumentor`."""

    name: str
    framework: str
    scope: str

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._instrumentor: Any = None
        self._provider: Any = None
        """The provider last instrumented for (an adapter making spans of its own, where the instrumentor has no
        tracer yet, makes them there)."""
        self._owns_instrumentor = False
        self._patches = PatchLog()
        self._deferred = Deferred(self.framework)

    def patch(self, patches: PatchLog) -> None:
        """Add the adapter's patches (called once per instrumenting, under the lock, the framework imported)."""
        raise NotImplementedError

    def unpatched(self) -> None:
        """Undo whatever :meth:`patch` did besides the patch log (a logging filter, kept state)."""

    def make_instrumentor(self) -> Any:
        """The OpenInference instrumentor (a singleton): ``instrument(tracer_provider=)`` switches it on."""
        raise NotImplementedError

    def instrumenting(self, instrumentor: Any) -> bool:
        """Whether ``instrumentor`` is switching itself on right now, further up this thread's stack (the launcher
        loading it imported the framework, which ran this adapter): it is then left to finish on its own."""
        return False

    @staticmethod
    def instrument_under_way(instrumentor: Any) -> bool:
        """Whether ``instrumentor``'s own ``_instrument`` is on this thread's stack: for an instrumentor whose
        ``_instrument`` imports the framework (LiteLLM's, DSPy's), the import that ran this adapter under the
        launcher. An adapter whose instrumentor does that returns this from :meth:`instrumenting`."""
        frame: Any = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_name == "_instrument" and frame.f_locals.get("self") is instrumentor:
                return True
            frame = frame.f_back
        return False

    def available(self) -> bool:
        try:
            return (importlib.util.find_spec(self.framework) is not None
                    and importlib.util.find_spec(self.scope) is not None)
        except (ImportError, ValueError):
            return False

    def instrument(self, tracer_provider: Any, processor: Any = None) -> None:
        """Instrument the framework for ``tracer_provider`` (whose span processors include the breaker), now or
        when the application imports it; idempotent."""
        self._deferred.run_or_defer(lambda: self._instrument(tracer_provider))

    def _instrument(self, tracer_provider: Any) -> None:
        self._provider = tracer_provider
        with self._lock:
            if not self._patches:
                self.patch(self._patches)
            if self._instrumentor is not None:
                return
            instrumentor = self.make_instrumentor()
            owns = not instrumentor.is_instrumented_by_opentelemetry and not self.instrumenting(instrumentor)
            if owns:
                try:
                    instrumentor.instrument(tracer_provider=tracer_provider)
                except ImportError:
                    if being_imported(self.scope):  # the launcher is loading this instrumentor right now
                        return
                    raise
            self._instrumentor, self._owns_instrumentor = instrumentor, owns

    def uninstrument(self) -> None:
        self._deferred.cancel()
        with self._lock:
            self._patches.undo()
            self.unpatched()
            if self._instrumentor is not None:
                if self._owns_instrumentor and self._instrumentor.is_instrumented_by_opentelemetry:
                    self._instrumentor.uninstrument()
                self._instrumentor = None
                self._owns_instrumentor = False
