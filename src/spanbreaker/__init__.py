"""spanbreaker: stop runaway AI agents with per-trace circuit breakers fed by OpenTelemetry spans.

Where things are (docs/architecture.md): the SDK façade :mod:`spanbreaker.processor` feeds span data to
:mod:`spanbreaker.engine`; :mod:`spanbreaker.conventions` turns it into signals (:mod:`spanbreaker.signals`);
the detectors (:mod:`spanbreaker.detectors`) return findings; the engine trips the trace's breaker
(:mod:`spanbreaker.breaker`) and returns a :mod:`spanbreaker.verdict`, which the façade applies: marks
(:mod:`spanbreaker.marking`) and the exception variant adapters register (:mod:`spanbreaker.adapters`).
"""

from __future__ import annotations

from .breaker import BreakerListener, BreakerState, TripRecord
from .config import BreakerConfig, ToolPolicy
from .errors import ConfigError, Steered, Tripped, register_steer_exception, register_trip_exception
from .instrumentation import instrument, processor_for, uninstrument
from .processor import BreakerSpanProcessor

__version__ = "0.1.0"

__all__ = [
    "BreakerConfig",
    "BreakerListener",
    "BreakerSpanProcessor",
    "BreakerState",
    "ConfigError",
    "Steered",
    "ToolPolicy",
    "TripRecord",
    "Tripped",
    "__version__",
    "instrument",
    "processor_for",
    "register_steer_exception",
    "register_trip_exception",
    "uninstrument",
]
