"""A Haystack app that knows nothing about spanbreaker: ``opentelemetry-instrument python haystack_app.py``.

A Haystack ``Agent`` runs the same search over and over with the same answer (its real ``OpenAIChatGenerator``, the
client served by the tests' scripted model, stands in for the LLM; nothing else is stubbed). Under the launcher
OpenInference's Haystack instrumentor loads with spanbreaker's adapter, and ``spanbreaker.Tripped`` comes out of
``agent.run``. The last stdout line is a JSON summary, the same keys as ``examples/launcher_app.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the tests' scripted model

from tests.haystack.scripted import agent, loop, scripted
from tests.launcher.apps._report import note_stop, report


def main() -> int:
    from haystack.dataclasses import ChatMessage

    steps = int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "20"))
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    counter: Any = SimpleNamespace(tool_bodies=[])  # what the scripted tool records; spans go to the launcher's
    model = scripted(loop)
    try:
        agent(counter, model, max_agent_steps=steps).run(messages=[ChatMessage.from_user("Weather in Paris?")])
        summary.update(outcome="max_iterations")
    except BaseException as exc:
        note_stop(summary, exc)
    summary.update(tool_calls=len(counter.tool_bodies), model_calls=model.calls)
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
