"""A scripted Agent Framework chat client, standing in for the LLM in the Agent Framework example.

Composed like Agent Framework's own ``OpenAIChatClient`` (``FunctionInvocationLayer``, ``ChatMiddlewareLayer``,
``ChatTelemetryLayer`` over ``BaseChatClient``), so the function-calling loop and the telemetry are Agent Framework's
own. The script is a function of how many tool results the conversation holds, returning the tool calls or the text
of the next reply.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_framework import (
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    Message,
)
from agent_framework.observability import ChatTelemetryLayer

Reply = list[tuple[str, dict[str, Any]]] | str
"""Tool calls ``[(name, arguments), ...]`` or a final text."""


class ScriptedChatClient(FunctionInvocationLayer, ChatMiddlewareLayer, ChatTelemetryLayer, BaseChatClient):  # type: ignore[misc]
    OTEL_PROVIDER_NAME = "scripted"

    def __init__(self, script: Callable[[int], Reply], model: str = "scripted-model", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.script = script
        self.model = model
        self.calls = 0

    def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
        if stream:
            raise NotImplementedError("the example runs the agent awaited")
        self.calls += 1
        results = sum(1 for m in messages for c in (m.contents or []) if c.type == "function_result")
        reply = self.script(results)
        if isinstance(reply, str):
            contents, finish = [Content.from_text(reply)], "stop"
        else:
            contents = [Content.from_function_call(call_id=f"call_{self.calls}_{k}", name=name, arguments=arguments)
                        for k, (name, arguments) in enumerate(reply)]
            finish = "tool_calls"
        usage = {"input_token_count": 800 + 40 * self.calls, "output_token_count": 25,
                 "total_token_count": 825 + 40 * self.calls}

        async def response() -> ChatResponse:
            return ChatResponse(messages=[Message(role="assistant", contents=contents)], model=self.model,
                                finish_reason=finish, usage_details=usage)

        return response()
