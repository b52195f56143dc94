"""A scripted stand-in for the LLM, shared by the Agno examples (the model is the only stub), and their report.

Agno ships no test model. This one answers each call with what ``reply(messages, n)`` returns (``n`` counts the
calls, from 1), as a real provider's ``ModelResponse``, so the OpenInference instrumentor records real LLM spans.
It is defined outside ``agno.models``, where the instrumentor does not look: spanbreaker's adapter wraps it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from agno.metrics import MessageMetrics
from agno.models.base import Model
from agno.models.response import ModelResponse

Reply = Callable[[Any, int], ModelResponse]
_REPLIES: dict[str, Reply] = {}
CALLS: dict[str, int] = {}
"""Model calls actually made, per scripted model id."""


def response(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None,
             usage: tuple[int, int] = (400, 60)) -> ModelResponse:
    """One model turn: text, or OpenAI-style tool calls, with token usage (input, output)."""
    made = ModelResponse(role="assistant", content=content)
    made.tool_calls = list(tool_calls or [])
    made.response_usage = MessageMetrics(input_tokens=usage[0], output_tokens=usage[1],
                                         total_tokens=usage[0] + usage[1])
    return made


@dataclass
class Scripted(Model):
    id: str = "scripted"
    name: str = "Scripted"
    provider: str = "offline"

    def _reply(self, messages: Any) -> ModelResponse:
        CALLS[self.id] = n = CALLS.get(self.id, 0) + 1
        return _REPLIES[self.id](messages, n)

    # The same explicit signature as real providers: the instrumentor binds arguments by name.
    def invoke(self, messages: Any, assistant_message: Any, response_format: Any = None, tools: Any = None,
               tool_choice: Any = None, run_response: Any = None, compress_tool_results: bool = False
               ) -> ModelResponse:
        return self._reply(messages)

    async def ainvoke(self, messages: Any, assistant_message: Any, response_format: Any = None,
                      tools: Any = None, tool_choice: Any = None, run_response: Any = None,
                      compress_tool_results: bool = False) -> ModelResponse:
        return self._reply(messages)

    def invoke_stream(self, messages: Any, assistant_message: Any, response_format: Any = None,
                      tools: Any = None, tool_choice: Any = None, run_response: Any = None,
                      compress_tool_results: bool = False) -> Iterator[ModelResponse]:
        yield self._reply(messages)

    async def ainvoke_stream(self, messages: Any, assistant_message: Any, response_format: Any = None,
                             tools: Any = None, tool_choice: Any = None, run_response: Any = None,
                             compress_tool_results: bool = False) -> AsyncIterator[ModelResponse]:
        yield self._reply(messages)

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]


def print_record(record: Any) -> None:
    """The breaker's record of a cancelled Agno run, as the examples print it."""
    print(f"  detector : {record.detector}")
    print(f"  reason   : {record.reason}")
    print(f"  evidence : {json.dumps(record.evidence, sort_keys=True)}")
    print(f"  agent    : {record.agent}   blocked calls: {record.blocked_calls}   trace: {record.trace_id}")


def scripted_model(model_id: str, reply: Reply) -> Scripted:
    """A model answering with ``reply(messages, n)``. Replies are kept by id: Agno deep-copies member models."""
    _REPLIES[model_id] = reply
    return Scripted(id=model_id)
