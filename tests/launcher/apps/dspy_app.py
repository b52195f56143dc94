"""A DSPy app that knows nothing about spanbreaker: ``opentelemetry-instrument python dspy_app.py``.

A ``dspy.ReAct`` runs the same search over and over with the same answer (the DSPy tests' scripted model, served on
loopback to DSPy's real engine, stands in for the LLM; nothing else is stubbed). Under the launcher the breaker
stops it and ``spanbreaker.Tripped`` comes out of ``react(...)``: ReAct catches only ``Exception`` around its tools.
The last stdout line is a JSON summary, the same keys as ``examples/launcher_app.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the tests' scripted model

from tests.dspy.scripted import agent
from tests.launcher.apps._report import note_stop, report


def main() -> int:
    max_iters = int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "20"))
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    with agent("loop", max_iters=max_iters) as looping:
        try:
            looping()
            if len(looping.searches) >= max_iters:  # ReAct's own guard: max_iters reached, then it answers anyway
                summary.update(outcome="max_iterations")
        except BaseException as exc:
            note_stop(summary, exc)
        summary.update(tool_calls=len(looping.searches), model_calls=looping.model.calls)
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
