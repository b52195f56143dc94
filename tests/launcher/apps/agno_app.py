"""An Agno app that knows nothing about spanbreaker: ``opentelemetry-instrument python agno_app.py``.

The agent searches for the same thing over and over with the same empty answer (the Agno tests' scripted model
stands in for the LLM; nothing else is stubbed). Under the launcher the breaker stops it: Agno ends the run
CANCELLED with the trip as its content. The last stdout line is a JSON summary, the same keys as
``examples/launcher_app.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the tests' scripted model

from agno.agent import Agent

from tests.agno.scripted import calls, scripted, tool_call
from tests.launcher.apps._report import note_stop, report

SEARCHES = [0]


def search(query: str) -> str:
    """Search the internal knowledge base."""
    SEARCHES[0] += 1
    return "No results."


def main() -> int:
    model = scripted(lambda messages, index: {"tool_calls": [tool_call("search", query="q3 revenue")],
                                              "usage": (200, 20)})
    agent = Agent(model=model, tools=[search], tool_call_limit=int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "8")))
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    try:
        output = agent.run("What was our revenue in Q3 2019?")
        content = str(output.content or "")
        if str(getattr(output.status, "value", output.status)).upper() == "CANCELLED":
            tripped = content.startswith("spanbreaker tripped [")
            detector = content.split("[", 1)[1].split("]", 1)[0] if tripped else None
            summary.update(outcome="stopped", exception="Tripped" if tripped else "cancelled", detector=detector)
    except BaseException as exc:
        note_stop(summary, exc)
    summary.update(tool_calls=SEARCHES[0], model_calls=calls(model))
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
