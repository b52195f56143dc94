"""Run example scripts as a user would: fresh processes in parallel, the global provider, offline."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def assert_examples(expected: Mapping[str, Sequence[str]], timeout: float = 60,
                    environment: Mapping[str, str] | None = None) -> None:
    """Each example exits 0, prints every expected line fragment and no traceback. A name may carry the example's
    arguments after its file name (``"openai_tool_loop.py --litellm"``). ``environment``: variables set for every
    example (a user's settings)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPANBREAKER_", "OTEL_", "OPENINFERENCE_"))}
    env.update(environment or {})
    env.pop("OPENAI_API_KEY", None)
    env.pop("HF_TOKEN", None)
    running = {name: subprocess.Popen([sys.executable, str(EXAMPLES / name.split()[0]), *name.split()[1:]],
                                      stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=env, cwd=EXAMPLES.parent)
               for name in expected}
    for name, process in running.items():
        out, err = process.communicate(timeout=timeout)
        assert process.returncode == 0, f"{name}: exit {process.returncode}\n{out}\n{err}"
        for fragment in expected[name]:
            assert fragment in out, f"{name}: {fragment!r} missing from\n{out}"
        assert "Traceback" not in err, err
