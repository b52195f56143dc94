"""A real Arize Phoenix server for the opt-in ``phoenix`` tier.

Phoenix is large (about 160 packages) and pins its own dependency versions, so it lives in its own virtual
environment and only its ``phoenix`` executable is used: ``PHOENIX_BIN`` when set, otherwise
``.venv/phoenix/bin/phoenix`` at the repository root (``make test-phoenix`` creates it, inside
``.venv`` so that git, ruff and ``make clean`` treat it like the main environment). The server runs on
127.0.0.1 with free ports and a SQLite working directory under pytest's tmp_path.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def phoenix_bin() -> Path | None:
    configured = os.environ.get("PHOENIX_BIN")
    candidate = Path(configured) if configured else ROOT / ".venv" / "phoenix" / "bin" / "phoenix"
    return candidate if candidate.is_file() else None


@dataclass
class Phoenix:
    base_url: str
    grpc_endpoint: str

    @property
    def traces_url(self) -> str:
        return self.base_url + "/v1/traces"


@pytest.fixture(scope="session")
def phoenix_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    binary = phoenix_bin()
    if binary is None:
        if "phoenix" in (request.config.getoption("-m") or ""):
            pytest.fail("Phoenix is not installed: run make test-phoenix (or set PHOENIX_BIN)")
        pytest.skip("Phoenix is not installed (opt-in phoenix tier: make test-phoenix)")
    workdir = tmp_path_factory.mktemp("phoenix")
    http_port, grpc_port = _free_port(), _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}
    env.update({"PHOENIX_WORKING_DIR": str(workdir), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(http_port),
                "PHOENIX_GRPC_PORT": str(grpc_port), "PHOENIX_TELEMETRY_ENABLED": "false",
                "DO_NOT_TRACK": "1"})
    log = (workdir / "phoenix.log").open("w")
    process = subprocess.Popen([str(binary), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{http_port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                output = (workdir / "phoenix.log").read_text()[-3000:]
                pytest.fail(f"phoenix exited with {process.returncode}: {output}")
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"phoenix not ready: {(workdir / 'phoenix.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield Phoenix(base, f"127.0.0.1:{grpc_port}")
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
