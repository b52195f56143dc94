"""spanbreaker: stop runaway AI agents with per-trace circuit breakers fed by OpenTelemetry spans.

Where things are: a span becomes a signal in :mod:`spanbreaker.signals`; signals become findings in
:mod:`spanbreaker.detectors`; a finding trips the trace's breaker in :mod:`spanbreaker.processor`
(:mod:`spanbreaker.breaker` holds the state machine); the trip reaches the framework through the exception
variants adapters register (:mod:`spanbreaker.adapters`); what a trip writes on spans is in
:mod:`spanbreaker.marking`.
"""

from __future__ import annotations

from .breaker import BreakerListener, BreakerState, TripRecord
from .config import BreakerConfig, ToolPolicy
from .errors import ConfigError, Tripped, register_trip_exception
from .instrumentation import instrument, processor_for, uninstrument
from .processor import BreakerSpanProcessor

__version__ = "0.1.0"

__all__ = [
    "BreakerConfig",
    "BreakerListener",
    "BreakerSpanProcessor",
    "BreakerState",
    "ConfigError",
    "ToolPolicy",
    "TripRecord",
    "Tripped",
    "__version__",
    "instrument",
    "processor_for",
    "register_trip_exception",
    "uninstrument",
]
