"""The Agno examples run offline, end to end, in a fresh interpreter (they set the global tracer provider).

The conftest starts them at the beginning of the session so they run alongside the in-process tests.
"""

from __future__ import annotations

import pytest

from .conftest import Launched

pytestmark = pytest.mark.timeout(90)


def test_team_delegation_cycle_example(launched: dict[str, Launched]) -> None:
    done = launched["agno_team_delegation_cycle"].result()
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert "status CANCELLED" in done.stdout
    assert "detector : delegation_repeat" in done.stdout
    assert "lead 4, specialist 3" in done.stdout


def test_session_bloat_example(launched: dict[str, Launched]) -> None:
    done = launched["agno_session_bloat"].result()
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert "run  7: CANCELLED" in done.stdout
    assert "detector : session_bloat" in done.stdout
    assert "the model was not called for this run" in done.stdout


def test_workflow_step_loop_example(launched: dict[str, Launched]) -> None:
    done = launched["agno_workflow_step_loop"].result()
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert "finished with status CANCELLED" in done.stdout
    assert "detector : tool_repeat" in done.stdout
    assert "steps run: ['research']" in done.stdout
    assert "researcher 5, writer 0" in done.stdout
