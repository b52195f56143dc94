"""The only stub: a scripted ``Model`` subclass standing in for the LLM, and reply builders.

Everything else in these tests is real: smolagents agents, their executor, the OpenInference instrumentor,
the OTel SDK and spanbreaker's adapter.
"""

from __future__ import annotations

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
    """Replays ``script`` (the last reply repeats); a callable item receives the messages (it may raise)."""

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


def usage(input_tokens: int = 400, output_tokens: int = 40) -> TokenUsage:
    return TokenUsage(input_tokens=input_tokens, output_tokens=output_tokens)


def code(source: str, thought: str = "Trying this.", tokens: TokenUsage | None = None) -> ChatMessage:
    """A CodeAgent reply."""
    return ChatMessage(role=MessageRole.ASSISTANT, content=f"Thought: {thought}\n<code>\n{source}\n</code>",
                       token_usage=tokens or usage())


def final_code(answer: str = "done") -> ChatMessage:
    return code(f"final_answer({answer!r})", thought="Done.")


def text(content: str) -> ChatMessage:
    """A reply with no code block: unparsable for a CodeAgent."""
    return ChatMessage(role=MessageRole.ASSISTANT, content=content, token_usage=usage())


def calls(*pairs: tuple[str, dict[str, Any]], tokens: TokenUsage | None = None) -> ChatMessage:
    """A ToolCallingAgent reply with one or more (parallel) tool calls."""
    return ChatMessage(
        role=MessageRole.ASSISTANT, content=None,
        tool_calls=[ChatMessageToolCall(id=f"call_{i}", type="function",
                                        function=ChatMessageToolCallFunction(name=name, arguments=arguments))
                    for i, (name, arguments) in enumerate(pairs)],
        token_usage=tokens or usage())


def call(name: str, arguments: dict[str, Any]) -> ChatMessage:
    return calls((name, arguments))


def final_call(answer: str = "done") -> ChatMessage:
    return call("final_answer", {"answer": answer})
