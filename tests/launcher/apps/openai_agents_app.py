"""An OpenAI Agents SDK app that knows nothing about spanbreaker: ``opentelemetry-instrument python
openai_agents_app.py``.

A support agent polls the same order and reads the same answer every time (the examples' scripted model stands
in for the LLM; nothing else is stubbed). Under the launcher the OpenInference instrumentor feeds the breaker, which
stops the loop: ``spanbreaker.Tripped`` comes out of ``Runner.run_sync``. The last stdout line is a JSON summary,
the same keys as ``examples/launcher_app.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the summary helper
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))  # the examples' scripted model

from _scripted_openai_agents import ScriptedModel
from agents import Agent, Runner, function_tool
from agents.exceptions import MaxTurnsExceeded

from tests.launcher.apps._report import note_stop, report

calls = {"tool": 0}


@function_tool
def order_status(order_id: str) -> str:
    """Look an order up."""
    calls["tool"] += 1
    return f"order {order_id}: pending, no carrier assigned"


def main() -> int:
    model = ScriptedModel(lambda n, items: [("order_status", {"order_id": "A-1042"})])
    agent = Agent(name="Support", instructions="Track orders.", tools=[order_status], model=model)
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    try:
        turns = int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "8"))
        Runner.run_sync(agent, "Where is my order A-1042?", max_turns=turns)
    except MaxTurnsExceeded:
        summary["outcome"] = "limit"
    except BaseException as exc:
        note_stop(summary, exc)
    summary.update(tool_calls=calls["tool"], model_calls=model.calls)
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
