"""A BeeAI app that knows nothing about spanbreaker: ``opentelemetry-instrument python beeai_app.py``.

A RequirementAgent rewords the same search over and over and gets the same answer (the BeeAI tests' scripted
ChatModel stands in for the LLM; nothing else is stubbed): a fixation spiral. Under the launcher the breaker stops
it with ``Tripped``, which BeeAI neither retries nor feeds back to the model. The last stdout line is a JSON
summary, the same keys as ``examples/launcher_app.py``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the tests' scripted model

from beeai_framework.agents.requirement import RequirementAgent
from beeai_framework.memory import UnconstrainedMemory
from beeai_framework.tools import tool

from tests.beeai.bee import Call, ScriptedChatModel
from tests.launcher.apps._report import note_stop, report

SEARCHES = [0]
PARAPHRASES = ("q3 2019 revenue", "revenue q3 2019", "q3 2019 revenues", "revenue for q3 2019", "2019 q3 revenue",
               "q3-2019 revenue")


@tool
def search(query: str) -> str:
    """Search the internal knowledge base."""
    SEARCHES[0] += 1
    return "1. Annual report 2019 - investors page. 2. Press release archive."


async def run() -> dict[str, Any]:
    model = ScriptedChatModel(lambda index: Call("search", {"query": PARAPHRASES[index % len(PARAPHRASES)]}))
    agent = RequirementAgent(llm=model, tools=[search], memory=UnconstrainedMemory())
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    try:
        await agent.run("What was our revenue in Q3 2019?",
                        max_iterations=int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "20")))
    except BaseException as exc:
        note_stop(summary, exc)
    summary.update(tool_calls=SEARCHES[0], model_calls=model.calls)
    return summary


def main() -> int:
    report(asyncio.run(run()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
