"""One real redis-server per test session (fault tests start their own, so they can kill it)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..core.spans import Harness, make_harness
from .procs import wait_until
from .server import RedisServer


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture
def prefix() -> str:
    """A key prefix of its own per test, so tests sharing the session server never see each other's keys."""
    return f"sbtest{uuid.uuid4().hex[:8]}"


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of the test's own, which it may kill, pause and restart."""
    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop()


@pytest.fixture
def pair(redis_server: RedisServer, prefix: str) -> Iterator[tuple[Harness, Harness]]:
    """Two breakers on the session's server, standing for two processes (own clients, own threads)."""
    made = [make_harness(state=redis_server.url, state_prefix=prefix, state_staleness_s=0.02) for _ in range(2)]
    # A message published before a subscriber thread has subscribed is not delivered to it (the trip then waits in
    # the hash for that process's next call): the tests publish only once both listen.
    client = redis_server.client()
    assert wait_until(lambda: client.pubsub_numsub(f"{prefix}:trips")[0][1] == 2), "subscribers did not start"
    yield made[0], made[1]
    for harness in made:
        harness.processor.shutdown()
