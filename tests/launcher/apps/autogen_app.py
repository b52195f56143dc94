"""An AutoGen app that knows nothing about spanbreaker: ``opentelemetry-instrument python autogen_app.py`` (run by the
AutoGen tier, ``tests/autogen/test_launcher.py``, in its own venv).

An ``AssistantAgent`` runs the same search over and over with the same answer: AutoGen's real
``OpenAIChatCompletionClient``, served in process by the tier's scripted model, stands in for the LLM; nothing else is
stubbed. Under the launcher every installed instrumentor loads (OpenInference's OpenAI and AutoGen AgentChat ones in
the tier) beside autogen-core's own spans, and spanbreaker's AutoGen adapter; ``spanbreaker.Tripped`` comes out of
``agent.run``. The last stdout line is a JSON summary, the same keys as ``examples/launcher_app.py``.

``AUTOGEN_APP_TOOLS=mcp``: the search comes from a real MCP server over stdio (``tests/autogen/mcp_search_server.py``)
through autogen-ext's ``McpWorkbench``, imported only once the app runs (after the launcher instrumented AutoGen).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the tier's scripted model

from tests.autogen.scripted import client_for, loop, scripted
from tests.launcher.apps._report import note_stop, report


async def run_with_mcp(summary: dict[str, Any], iterations: int) -> None:
    import tempfile

    from autogen_agentchat.agents import AssistantAgent
    from autogen_ext.tools.mcp import McpWorkbench, StdioServerParams

    model = scripted(loop(calls=iterations))
    server = Path(__file__).resolve().parents[2] / "autogen" / "mcp_search_server.py"
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "calls.log"
        params = StdioServerParams(command=sys.executable, args=[str(server)],
                                   env={"SEARCH_LOG": str(log), "SEARCH_ANSWERS": "same"}, read_timeout_seconds=30)
        try:
            async with McpWorkbench(params) as workbench:
                agent = AssistantAgent("analyst", model_client=client_for(model), workbench=workbench,
                                       max_tool_iterations=iterations, system_message="You look things up.")
                await agent.run(task="What's the weather in Paris?")
        except BaseException as exc:
            note_stop(summary, exc)
        summary.update(tool_calls=len(log.read_text().splitlines()) if log.exists() else 0, model_calls=model.calls)


async def run(summary: dict[str, Any], iterations: int) -> None:
    from autogen_agentchat.agents import AssistantAgent

    if os.environ.get("AUTOGEN_APP_TOOLS") == "mcp":
        await run_with_mcp(summary, iterations)
        return
    model = scripted(loop(calls=iterations))
    searches: list[str] = []

    async def search(query: str) -> str:
        """Search the web."""
        searches.append(query)
        return "Paris: sunny, 21 C."

    agent = AssistantAgent("analyst", model_client=client_for(model), tools=[search],
                           max_tool_iterations=iterations, system_message="You look things up.")
    try:
        await agent.run(task="What's the weather in Paris?")
        if len(searches) >= iterations:  # AutoGen's own guard ended the run
            summary.update(outcome="max_iterations")
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
