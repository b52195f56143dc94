"""A Strands Agents app that knows nothing about spanbreaker: ``opentelemetry-instrument python strands_app.py``.

An agent re-runs one search and reads the same page every time (a scripted Strands ``Model`` stands in for the
LLM; nothing else is stubbed). Under the launcher, spanbreaker puts Strands' own OpenTelemetry spans on the
breaker's provider, the breaker stops the loop and ``spanbreaker.Tripped`` comes out of ``agent(...)``. The last
stdout line is a JSON summary, the same keys as ``examples/launcher_app.py``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the summary helper

from strands import Agent, tool
from strands.models.model import Model

from tests.launcher.apps._report import note_stop, report

calls = {"model": 0, "tool": 0}


class StuckModel(Model):
    """Asks for the same search, forever (Bedrock-style stream events)."""

    def __init__(self) -> None:
        self.config: dict[str, Any] = {"model_id": "stuck-model"}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> Any:
        return self.config

    async def structured_output(self, output_model: Any, prompt: Any, system_prompt: Any = None,
                                **kwargs: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError
        yield

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None,
                     **kwargs: Any) -> AsyncGenerator[Any, None]:
        calls["model"] += 1
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": f"call_{calls['model']}",
                                                           "name": "web_search"}}}}
        yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(
            {"query": "acme 2026 revenue guidance"})}}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}
        yield {"metadata": {"usage": {"inputTokens": 800 + 40 * calls["model"], "outputTokens": 25,
                                      "totalTokens": 825 + 40 * calls["model"]}, "metrics": {"latencyMs": 5}}}


@tool
def web_search(query: str) -> str:
    """Search the web.

    Args:
        query: what to look up
    """
    calls["tool"] += 1
    return "Acme Corp investor relations: guidance for 2026 will be published in March."


def main() -> int:
    agent = Agent(model=StuckModel(), tools=[web_search], name="analyst", callback_handler=None)
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    try:
        result = agent("What is Acme's 2026 revenue guidance?",
                       limits={"turns": int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "8"))})
        if result.stop_reason == "limit_turns":
            summary["outcome"] = "limit"
    except BaseException as exc:
        note_stop(summary, exc)
    summary.update(tool_calls=calls["tool"], model_calls=calls["model"])
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
