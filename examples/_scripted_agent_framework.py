"""An Agent Framework chat client driven by a script: the only stub in the Agent Framework example and its tests.

It is composed like Agent Framework's own ``OpenAIChatClient`` (``FunctionInvocationLayer``, ``ChatMiddlewareLayer``,
``ChatTelemetryLayer`` over ``BaseChatClient``), so the function-calling loop, the middleware and the telemetry (the
``chat`` and ``execute_tool`` spans) are Agent Framework's own; only the model's reply is scripted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from agent_framework import (
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationLayer,
    Message,
    ResponseStream,
)
from agent_framework.observability import ChatTelemetryLayer

Reply = list[tuple[str, dict[str, Any]]] | str
"""Tool calls ``[(name, arguments), ...]`` or a final text."""


def tool_results(messages: Any) -> int:
    return sum(1 for m in messages for c in (m.contents or []) if c.type == "function_result")


class Scripted(FunctionInvocationLayer, ChatMiddlewareLayer, ChatTelemetryLayer, BaseChatClient):  # type: ignore[misc]
    """``script(tool results so far) -> reply``, counted; usage grows with the conversation."""

    OTEL_PROVIDER_NAME = "scripted"

    def __init__(self, script: Callable[[int], Reply], model: str = "scripted-model", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.script = script
        self.model = model
        self.calls = 0

    def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
        self.calls += 1
        n = tool_results(messages)
        reply = self.script(n)
        if isinstance(reply, str):
            contents = [Content.from_text(reply)]
            finish = "stop"
        else:
            contents = [Content.from_function_call(call_id=f"call_{self.calls}_{k}", name=name, arguments=arguments)
                        for k, (name, arguments) in enumerate(reply)]
            finish = "tool_calls"
        usage = {"input_token_count": 100 + 10 * n, "output_token_count": 20, "total_token_count": 120 + 10 * n}
        if stream:
            async def updates() -> AsyncIterator[ChatResponseUpdate]:
                yield ChatResponseUpdate(role="assistant", contents=contents, model=self.model, finish_reason=finish)
                yield ChatResponseUpdate(role="assistant", contents=[Content.from_usage(usage)])

            return ResponseStream(updates(), finalizer=ChatResponse.from_updates)

        async def response() -> ChatResponse:
            return ChatResponse(messages=[Message(role="assistant", contents=contents)], model=self.model,
                                finish_reason=finish, usage_details=usage, response_id=f"resp_{self.calls}")

        return response()
