"""A scripted Agno ``Model``: the only stub in the Agno suite; it stands in for the LLM.

Agno ships no test model. This one replays a script of steps (content, tool calls, token usage) and counts
its calls, so a test can assert that the breaker stopped the run *before* the next model call. It is defined
outside ``agno.models`` on purpose: the instrumentor does not wrap such classes, the adapter must.

Scripts live in a module-level table keyed by model id, because Agno deep-copies models for member runs.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("AGNO_TELEMETRY", "false")

from agno.metrics import MessageMetrics
from agno.models.base import Model
from agno.models.response import ModelResponse

Step = dict[str, Any]
StepFn = Callable[[list[Any], int], Step]

MAX_CALLS = 60
_SCRIPTS: dict[str, Script] = {}
_ids = itertools.count(1)


def tool_call(name: str, **arguments: Any) -> dict[str, Any]:
    """An OpenAI-style tool call, the shape Agno's model loop expects."""
    return {"id": f"call_{next(_ids)}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


class Script:
    def __init__(self, steps: list[Step] | StepFn, default: Step | None = None) -> None:
        self.steps = steps
        self.default = default or {"content": "done"}
        self.calls = 0
        self.lock = threading.Lock()

    def next(self, messages: list[Any]) -> Step:
        with self.lock:
            index = self.calls
            self.calls += 1
        if index >= MAX_CALLS:
            return {"content": "scripted model gave up"}  # a breaker that failed to trip fails a test, not hangs it
        if callable(self.steps):
            return self.steps(messages, index)
        return self.steps[index] if index < len(self.steps) else self.default


@dataclass
class ScriptedModel(Model):
    id: str = "scripted"
    name: str = "ScriptedModel"
    provider: str = "Scripted"

    @property
    def script(self) -> Script:
        return _SCRIPTS[self.id]

    def _respond(self, messages: list[Any]) -> ModelResponse:
        step = _SCRIPTS[self.id].next(messages)
        if "raise" in step:
            raise step["raise"]
        response = ModelResponse(role="assistant")
        response.content = step.get("content")
        response.tool_calls = list(step.get("tool_calls") or [])
        usage = step.get("usage", (10, 5))  # (input tokens, output tokens[, cost in USD])
        if usage:
            response.response_usage = MessageMetrics(input_tokens=usage[0], output_tokens=usage[1],
                                                     total_tokens=usage[0] + usage[1],
                                                     cost=usage[2] if len(usage) > 2 else None)
        return response

    # The same explicit signature as real providers: the instrumentor binds arguments by name.
    def invoke(self, messages: list[Any], assistant_message: Any, response_format: Any = None, tools: Any = None,
               tool_choice: Any = None, run_response: Any = None, compress_tool_results: bool = False
               ) -> ModelResponse:
        return self._respond(messages)

    async def ainvoke(self, messages: list[Any], assistant_message: Any, response_format: Any = None,
                      tools: Any = None, tool_choice: Any = None, run_response: Any = None,
                      compress_tool_results: bool = False) -> ModelResponse:
        return self._respond(messages)

    def invoke_stream(self, messages: list[Any], assistant_message: Any, response_format: Any = None,
                      tools: Any = None, tool_choice: Any = None, run_response: Any = None,
                      compress_tool_results: bool = False) -> Iterator[ModelResponse]:
        yield self._respond(messages)

    async def ainvoke_stream(self, messages: list[Any], assistant_message: Any, response_format: Any = None,
                             tools: Any = None, tool_choice: Any = None, run_response: Any = None,
                             compress_tool_results: bool = False) -> AsyncIterator[ModelResponse]:
        yield self._respond(messages)

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]


def scripted(steps: list[Step] | StepFn, default: Step | None = None, model_id: str | None = None) -> ScriptedModel:
    """A model that replays ``steps`` (a list, or ``fn(messages, index) -> step``), then ``default``."""
    model_id = model_id or f"scripted-{next(_ids)}"
    _SCRIPTS[model_id] = Script(steps, default)
    return ScriptedModel(id=model_id)


def calls(model: ScriptedModel) -> int:
    """How many times the model was actually called."""
    return _SCRIPTS[model.id].calls
