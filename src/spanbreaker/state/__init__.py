"""Shared breaker state across processes (``BreakerConfig.state = "redis://..."``).

``attach_shared_state`` is what the processor calls when ``config.state`` is set; ``open_trace`` and
``reset_trace`` are the fleet kill switch (also ``spanbreaker open|reset TRACE_ID --state URL``): they write the
trip into the trace's shared hash and publish it, so every process latches the trace OPEN before its next call.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING

from ..breaker import TripRecord
from ..errors import ConfigError
from .propagation import ChainPropagator
from .redis import RedisSharedState, encode_trip, make_client, trace_hex, trace_key, trips_channel

if TYPE_CHECKING:
    from ..processor import BreakerSpanProcessor

__all__ = ["ChainPropagator", "RedisSharedState", "attach_shared_state", "open_trace", "reset_trace"]

KILL_SWITCH_TTL_S = 3600
"""How long a kill switch stays in the shared hash for processes that join the trace later."""


def attach_shared_state(processor: BreakerSpanProcessor) -> None:
    """Attach the shared-state client named by ``processor.config.state`` to the processor.

    Never touches the network here: a Redis that is down at start-up only means the local view until it is up.
    """
    url = processor.config.state
    if not url or not url.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(f"state={url!r}: expected a redis://, rediss:// or unix:// URL")
    try:
        import redis  # noqa: F401
    except ImportError:
        raise ConfigError(f"state={url!r} needs redis-py: pip install 'spanbreaker[redis]'") from None
    processor.shared = RedisSharedState(processor, url)


def open_trace(url: str, trace_id: int | str, reason: str = "forced open", *, prefix: str = "spanbreaker",
               ttl_s: int = KILL_SWITCH_TTL_S, timeout_s: float = 2.0) -> TripRecord:
    """Open a trace's breaker in every process sharing ``url`` (raises on Redis errors: this is an operator call)."""
    hexid = trace_hex(trace_id)
    record = TripRecord("forced", reason, hexid, time_unix_nano=time.time_ns())
    payload = encode_trip(record, "kill-switch-" + uuid.uuid4().hex[:8], uuid.uuid4().hex)
    client = make_client(url, timeout_s)
    try:
        key = trace_key(prefix, hexid)
        pipe = client.pipeline(transaction=True)
        pipe.hset(key, "trip", payload)
        pipe.expire(key, ttl_s)
        pipe.publish(trips_channel(prefix), payload)
        pipe.execute()
    finally:
        client.close()
    return record


def reset_trace(url: str, trace_id: int | str, *, prefix: str = "spanbreaker", timeout_s: float = 2.0) -> None:
    """Close a trace's breaker in every process sharing ``url`` (budgets spent so far are kept)."""
    import json

    hexid = trace_hex(trace_id)
    client = make_client(url, timeout_s)
    try:
        pipe = client.pipeline(transaction=True)
        pipe.hdel(trace_key(prefix, hexid), "trip")
        pipe.publish(trips_channel(prefix), json.dumps({"op": "reset", "trace": hexid, "origin": "kill-switch"}))
        pipe.execute()
    finally:
        client.close()
