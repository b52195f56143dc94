"""What OpenLIT's adapters share: their base class, and whether OpenLIT is installed, told without importing it.

Importing ``openlit`` takes about a third of a second (its evaluations and guards come with it), and the usual
check of an instrumentor module (``find_spec("openlit.instrumentation.openai")``) imports the package to find its
submodule: an application with OpenLIT installed but not in use would pay that at every ``spanbreaker.instrument()``.
The top-level package is found without running it; the adapters then wait for ``openlit.init()`` to import the
instrumentors (:mod:`._deferred`).
"""

from __future__ import annotations

import importlib.util

from ._client_requests import ClientRequestsAdapter

OPENLIT = "openlit"


def openlit_installed() -> bool:
    try:
        return importlib.util.find_spec(OPENLIT) is not None
    except (ImportError, ValueError):
        return False


class OpenLITClientAdapter(ClientRequestsAdapter):
    """An OpenLIT client instrumentation's wrappers, composed with the request showing (:mod:`._client_requests`):
    available when OpenLIT is installed, told without importing it."""

    def available(self) -> bool:
        return openlit_installed()
