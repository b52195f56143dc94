"""Real BeeAI agents for the tests: a scripted ChatModel (the only stub) and agent factories.

The scripted model answers each call from a list of moves, in the format each agent class parses: tool calls
for ToolCallingAgent and RequirementAgent, ReAct instruction lines (streamed) for ReActAgent. Usage is
reported per call so token budgets and context growth see real numbers.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from beeai_framework.backend import AssistantMessage, ChatModel, MessageToolCallContent
from beeai_framework.backend.types import ChatModelInput, ChatModelOutput, ChatModelUsage
from beeai_framework.context import RunContext
from beeai_framework.utils.strings import to_json


@dataclass(frozen=True)
class Call:
    """The model asks for one tool call."""

    tool: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    """The model gives its final answer."""

    text: str


Move = Call | Answer
Script = Sequence[Move] | Callable[[int], Move]
"""A fixed list of moves, or a function of the 0-based call number (an endless loop)."""


class ScriptedChatModel(ChatModel):
    """A ChatModel whose completions come from a script; counts calls and the prompt size of each."""

    def __init__(self, script: Script, *, react: bool = False, tokens_per_char: float = 0.25) -> None:
        super().__init__()
        self._script = script
        self._react = react
        self._tokens_per_char = tokens_per_char
        self.calls = 0
        self.prompt_tokens: list[int] = []

    @property
    def model_id(self) -> str:
        return "scripted-model"

    @property
    def provider_id(self) -> Any:
        return "ollama"

    def _next(self) -> Move:
        index = self.calls
        self.calls += 1
        if callable(self._script):
            return self._script(index)
        if index >= len(self._script):
            return Answer("out of script")
        return self._script[index]

    def _usage(self, model_input: ChatModelInput) -> ChatModelUsage:
        chars = len(to_json(model_input.messages, sort_keys=False))
        prompt = max(1, int(chars * self._tokens_per_char))
        self.prompt_tokens.append(prompt)
        return ChatModelUsage(prompt_tokens=prompt, completion_tokens=20, total_tokens=prompt + 20)

    def _message(self, move: Move) -> AssistantMessage:
        if self._react:
            if isinstance(move, Answer):
                return AssistantMessage(f"Thought: I can answer now.\nFinal Answer: {move.text}")
            return AssistantMessage(f"Thought: I need {move.tool}.\nFunction Name: {move.tool}\n"
                                    f"Function Input: {json.dumps(move.args)}\n")
        call = move if isinstance(move, Call) else Call("final_answer", {"response": move.text})
        return AssistantMessage(MessageToolCallContent(
            id=f"call_{self.calls}", tool_name=call.tool, args=json.dumps(call.args)))

    async def clone(self) -> ScriptedChatModel:
        """BeeAI clones a handed-off agent's model; the clone keeps the script and the counts."""
        return self

    async def _create(self, input: ChatModelInput, run: RunContext) -> ChatModelOutput:
        return ChatModelOutput(output=[self._message(self._next())], usage=self._usage(input))

    async def _create_stream(self, input: ChatModelInput, run: RunContext) -> AsyncGenerator[ChatModelOutput]:
        yield ChatModelOutput(output=[self._message(self._next())], usage=self._usage(input))
