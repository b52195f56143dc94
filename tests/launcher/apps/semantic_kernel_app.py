"""A Microsoft Semantic Kernel app that knows nothing about spanbreaker: ``opentelemetry-instrument python
semantic_kernel_app.py`` (Semantic Kernel's diagnostics as the environment sets them, off by default).

A ``ChatCompletionAgent`` re-runs one search and reads the same page every time (the scripted OpenAI model, served to
the real ``openai`` client in process, stands in for the LLM; nothing else is stubbed). Semantic Kernel's own spans go
to the global provider the launcher sets up, where spanbreaker's breaker is; its ``execute_tool`` span carries a call's
arguments only with its sensitive diagnostics on, and spanbreaker's adapter shows them to the breaker in process
either way: the fifth identical search is vetoed and ``spanbreaker.Tripped`` comes out of ``agent.get_response``. The
last stdout line is a JSON summary, the same keys as ``examples/launcher_app.py``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the summary helper
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))  # the scripted model

import openai
from _scripted_openai import ScriptedModel
from semantic_kernel import Kernel
from semantic_kernel.agents import ChatCompletionAgent
from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
from semantic_kernel.functions import kernel_function

from tests.launcher.apps._report import note_stop, report

calls = {"tool": 0}


class Research:
    @kernel_function(name="web_search", description="Search the web.")
    def web_search(self, query: str) -> str:
        calls["tool"] += 1
        return "Acme Corp investor relations: guidance for 2026 will be published in March."


def main() -> int:
    model = ScriptedModel(lambda messages: [("research-web_search", {"query": "acme 2026 revenue guidance"})])
    client = model.client(openai.AsyncOpenAI, asynchronous=True, api_key="offline",
                          base_url="http://scripted.invalid/v1")
    kernel = Kernel()
    kernel.add_plugin(Research(), plugin_name="research")
    agent = ChatCompletionAgent(
        service=OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=client), kernel=kernel, name="analyst",
        instructions="Research, then answer.", function_choice_behavior=FunctionChoiceBehavior.Auto(
            maximum_auto_invoke_attempts=int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "8"))))
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    try:
        asyncio.run(agent.get_response(messages="What is Acme's 2026 revenue guidance?"))
        if calls["tool"] >= int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "8")):  # Semantic Kernel's own limit
            summary["outcome"] = "limit"
    except BaseException as exc:
        note_stop(summary, exc)
    summary.update(tool_calls=calls["tool"], model_calls=model.calls)
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
