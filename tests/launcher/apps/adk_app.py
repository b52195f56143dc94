"""A Google ADK app that knows nothing about spanbreaker: ``opentelemetry-instrument python adk_app.py`` (run by the
ADK tier, ``tests/adk/test_launcher.py``, in its own venv), on ADK's default telemetry (no content on spans).

An ``LlmAgent`` runs the same search over and over with the same answer: the tier's scripted ``BaseLlm`` stands in
for Gemini; nothing else is stubbed. Under the launcher spanbreaker's plugin puts the breaker on the global provider
ADK traces through and switches its ADK adapter on when ADK is imported; ``spanbreaker.Tripped`` comes out of
``run_async``. The last stdout line is a JSON summary, the same keys as ``examples/launcher_app.py``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the tier's scripted model

from tests.adk.scripted import loop, scripted
from tests.launcher.apps._report import note_stop, report


async def run(summary: dict[str, Any], steps: int) -> None:
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    searches: list[str] = []

    def search(query: str) -> str:
        """Search the web."""
        searches.append(query)
        return "Paris: sunny, 21 C."

    model = scripted(loop(steps))
    agent = LlmAgent(name="analyst", model=model, instruction="Answer using the search tool.", tools=[search])
    runner = InMemoryRunner(agent=agent, app_name="weather")
    session = await runner.session_service.create_session(app_name="weather", user_id="u")
    question = types.Content(role="user", parts=[types.Part(text="What's the weather in Paris?")])
    try:
        async for _event in runner.run_async(user_id="u", session_id=session.id, new_message=question):
            pass
        if len(searches) >= steps:
            summary.update(outcome="limit")
    except BaseException as exc:
        note_stop(summary, exc)
    summary.update(tool_calls=len(searches), model_calls=model.calls)


def main() -> int:
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    asyncio.run(run(summary, int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "20"))))
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
