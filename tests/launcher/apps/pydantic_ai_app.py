"""A pydantic-ai app that knows nothing about spanbreaker: ``opentelemetry-instrument python pydantic_ai_app.py``.

An agent re-runs one search and reads the same page every time (pydantic-ai's ``FunctionModel``, scripted, stands
in for the LLM; nothing else is stubbed). Under the launcher, spanbreaker switches pydantic-ai's own
OpenTelemetry instrumentation on, the breaker stops the loop and ``spanbreaker.Tripped`` comes out of
``run_sync``. The last stdout line is a JSON summary, the same keys as ``examples/launcher_app.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the summary helper

from pydantic_ai import Agent, UsageLimits
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from tests.launcher.apps._report import note_stop, report

calls = {"model": 0, "tool": 0}


def stuck_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    calls["model"] += 1
    return ModelResponse(parts=[ToolCallPart("web_search", {"query": "acme 2026 revenue guidance"})],
                         usage=RequestUsage(input_tokens=800 + 40 * calls["model"], output_tokens=25))


def main() -> int:
    agent = Agent(FunctionModel(stuck_model, model_name="stuck-model"), name="analyst")

    @agent.tool_plain
    def web_search(query: str) -> str:
        """Search the web."""
        calls["tool"] += 1
        return "Acme Corp investor relations: guidance for 2026 will be published in March."

    limit = UsageLimits(request_limit=int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "8")))
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    try:
        agent.run_sync("What is Acme's 2026 revenue guidance?", usage_limits=limit)
    except UsageLimitExceeded:
        summary["outcome"] = "limit"
    except BaseException as exc:
        note_stop(summary, exc)
    summary.update(tool_calls=calls["tool"], model_calls=calls["model"])
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
