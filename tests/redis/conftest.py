"""One real redis-server per test session (fault tests start their own, so they can kill it)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

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
