"""A scripted stand-in for the LLM, shared by the smolagents examples (the model is the only stub).

Each call returns the next scripted ``ChatMessage`` (the last one repeats), with a token count, so that the
OpenInference instrumentor records real LLM spans and the breaker sees real usage figures.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
    TokenUsage,
)

Reply = ChatMessage | Callable[[list[Any]], ChatMessage]


class ScriptedModel(Model):
    """Replays a script of replies; an item may be a callable of the messages (to raise, or to adapt)."""

    def __init__(self, script: Sequence[Reply], model_id: str = "scripted-model", **kwargs: Any) -> None:
        super().__init__(model_id=model_id, **kwargs)
        self.script = list(script)
        self.calls = 0

    def generate(self, messages: list[Any], stop_sequences: list[str] | None = None,
                 response_format: dict[str, str] | None = None, tools_to_call_from: list[Any] | None = None,
                 **kwargs: Any) -> ChatMessage:
        item = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        return item(messages) if callable(item) else item


def _usage(messages_chars: int = 0) -> TokenUsage:
    return TokenUsage(input_tokens=400 + messages_chars // 4, output_tokens=40)


def code_reply(code: str, thought: str = "Let me try this.") -> ChatMessage:
    """What a CodeAgent model answers: a thought and a code block."""
    return ChatMessage(role=MessageRole.ASSISTANT, content=f"Thought: {thought}\n<code>\n{code}\n</code>",
                       token_usage=_usage())


def tool_reply(name: str, arguments: dict[str, Any], call_id: str = "call_0") -> ChatMessage:
    """What a ToolCallingAgent model answers: one tool call."""
    return tool_replies([(name, arguments)], call_id)


def tool_replies(calls: Sequence[tuple[str, dict[str, Any]]], call_id: str = "call") -> ChatMessage:
    """Several tool calls in one answer (ToolCallingAgent runs them in parallel)."""
    return ChatMessage(
        role=MessageRole.ASSISTANT, content=None,
        tool_calls=[ChatMessageToolCall(id=f"{call_id}_{i}", type="function",
                                        function=ChatMessageToolCallFunction(name=name, arguments=args))
                    for i, (name, args) in enumerate(calls)],
        raw=json.dumps([name for name, _ in calls]), token_usage=_usage())
