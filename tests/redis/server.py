"""A real ``redis-server`` on 127.0.0.1, on a free port, in a temporary directory (no persistence).

Tests need to kill, pause (SIGSTOP) and restart it, so this wraps the process rather than a fixture library.
A missing ``redis-server`` is installed with apt (as root or through sudo), as ``make redis-server`` does; if
that fails the test fails: Redis tests never skip.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import redis


def ensure_redis_server() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in ([*sudo, "apt-get", "install", "-y", "-qq", "redis-server"],
                    [*sudo, "apt-get", "update", "-qq"],
                    [*sudo, "apt-get", "install", "-y", "-qq", "redis-server"]):
        subprocess.run(command, env=env, capture_output=True, timeout=300, check=False)
        found = shutil.which("redis-server")
        if found:
            return found
    raise RuntimeError("redis-server is missing and could not be installed with apt (run `make redis-server`)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    def __init__(self, directory: Path, port: int | None = None, password: str | None = None,
                 unix_socket: Path | None = None) -> None:
        self.binary = ensure_redis_server()
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.password = password
        self.unix_socket = unix_socket

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, password=self.password, socket_timeout=2.0)

    def start(self) -> RedisServer:
        log = open(self.directory / "redis.log", "ab")  # noqa: SIM115 - kept open for the server's lifetime
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
             "--save", "", "--appendonly", "no", "--protected-mode", "no", "--daemonize", "no",
             *(["--requirepass", self.password] if self.password else []),
             *(["--unixsocket", str(self.unix_socket), "--unixsocketperm", "700"] if self.unix_socket else [])],
            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if self.client().ping():
                    return self
            except redis.RedisError:
                time.sleep(0.02)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)
        self.process = None

    def pause(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def restart(self) -> None:
        self.kill()
        self.start()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
        self.kill()
