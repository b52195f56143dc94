"""pydantic-ai's own ``FunctionModel`` driven by a script: the only stub in these tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

Reply = list[tuple[str, dict[str, Any]]] | str
"""Tool calls ``[(name, arguments), ...]`` or a final text."""


def tool_results(messages: list[ModelMessage]) -> int:
    return sum(1 for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart))


class Scripted:
    """``script(tool results so far) -> reply``, counted; usage grows with the conversation."""

    def __init__(self, script: Callable[[int], Reply], input_tokens: Callable[[int], int] | None = None) -> None:
        self.script = script
        self.input_tokens = input_tokens or (lambda n: 100 + 10 * n)
        self.calls = 0
        self.model = FunctionModel(self._reply, model_name="scripted-fn")

    def _reply(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls += 1
        n = tool_results(messages)
        usage = RequestUsage(input_tokens=self.input_tokens(n), output_tokens=20)
        reply = self.script(n)
        if isinstance(reply, str):
            return ModelResponse(parts=[TextPart(reply)], usage=usage)
        return ModelResponse(parts=[ToolCallPart(name, args) for name, args in reply], usage=usage)
