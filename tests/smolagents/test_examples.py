"""The smolagents examples run as a user would run them: a fresh process, the global provider, offline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXPECTED = {
    "smolagents_code_repair_loop.py": ("detector : error_loop", "spanbreaker.blocked=true", "model calls made: 4"),
    "smolagents_search_storm.py": ("detector : tool_repeat", "searches actually run: 4"),
    "smolagents_managed_cycle.py": ("detector : delegation_cycle", "orchestrator -> specialist -> orchestrator"),
}


def test_examples_trip_as_expected_and_exit_zero() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPANBREAKER_", "OTEL_"))}
    env.pop("OPENAI_API_KEY", None)
    env.pop("HF_TOKEN", None)
    running = {name: subprocess.Popen([sys.executable, str(EXAMPLES / name)], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=env, cwd=EXAMPLES.parent)
               for name in EXPECTED}
    for name, process in running.items():
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, f"{name}: exit {process.returncode}\n{out}\n{err}"
        for expected in EXPECTED[name]:
            assert expected in out, f"{name}: {expected!r} missing from\n{out}"
        assert "Traceback" not in err, err
