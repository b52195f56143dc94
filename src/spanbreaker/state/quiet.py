"""Shared state's own network calls make no spans.

An application that instruments redis-py (``opentelemetry-instrumentation-redis``, or ``opentelemetry-instrument``
with every instrumentor) would otherwise trace every flush, subscription read and trip publication: spans the
user never asked for, fed back into the breaker, on threads that must never block or recurse into it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from opentelemetry.instrumentation.utils import suppress_instrumentation

F = TypeVar("F", bound=Callable[..., Any])


def quiet(function: F) -> F:
    """``function`` with OpenTelemetry instrumentation suppressed while it runs (thread targets, publishers)."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        with suppress_instrumentation():
            return function(*args, **kwargs)

    return run  # type: ignore[return-value]
