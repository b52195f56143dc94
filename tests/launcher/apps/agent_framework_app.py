"""A Microsoft Agent Framework app that knows nothing about spanbreaker: ``opentelemetry-instrument python
agent_framework_app.py`` (``ENABLE_SENSITIVE_DATA`` as the environment sets it, off by default).

An agent re-runs one search and reads the same page every time (a scripted chat client, composed like Agent
Framework's own ``OpenAIChatClient``, stands in for the LLM; nothing else is stubbed). Agent Framework's own spans go
to the global provider the launcher sets up, where spanbreaker's breaker is; with Agent Framework's sensitive data on
(the environment's ``ENABLE_SENSITIVE_DATA``) its tool spans carry the arguments and results, and with it off
spanbreaker's adapter shows them to the breaker in process: either way the breaker stops the loop and
``spanbreaker.Tripped`` comes out of ``agent.run``. The last stdout line is a JSON summary, the same keys as
``examples/launcher_app.py``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the summary helper

from agent_framework import (
    Agent,
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    Message,
    tool,
)
from agent_framework.observability import ChatTelemetryLayer

from tests.launcher.apps._report import note_stop, report

calls = {"model": 0, "tool": 0}


class StuckChatClient(FunctionInvocationLayer, ChatMiddlewareLayer, ChatTelemetryLayer, BaseChatClient):  # type: ignore[misc]
    """Asks for the same search, forever."""

    OTEL_PROVIDER_NAME = "scripted"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model = "stuck-model"

    def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
        calls["model"] += 1
        call = Content.from_function_call(call_id=f"call_{calls['model']}", name="web_search",
                                          arguments={"query": "acme 2026 revenue guidance"})
        usage = {"input_token_count": 800 + 40 * calls["model"], "output_token_count": 25,
                 "total_token_count": 825 + 40 * calls["model"]}

        async def response() -> ChatResponse:
            return ChatResponse(messages=[Message(role="assistant", contents=[call])], model=self.model,
                                finish_reason="tool_calls", usage_details=usage)

        return response()


@tool
def web_search(query: str) -> str:
    """Search the web."""
    calls["tool"] += 1
    return "Acme Corp investor relations: guidance for 2026 will be published in March."


def main() -> int:
    client = StuckChatClient()
    client.function_invocation_configuration["max_iterations"] = int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "8"))
    agent = Agent(client=client, name="analyst", tools=[web_search])
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    try:
        asyncio.run(agent.run("What is Acme's 2026 revenue guidance?"))
        if calls["model"] > calls["tool"]:  # Agent Framework's own limit: a last model call without tools
            summary["outcome"] = "limit"
    except BaseException as exc:
        note_stop(summary, exc)
    summary.update(tool_calls=calls["tool"], model_calls=calls["model"])
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
