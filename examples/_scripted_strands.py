"""A Strands ``Model`` driven by a script: the only stub in the Strands example and its tests.

It streams what Strands' Bedrock model streams (``messageStart``, ``contentBlockStart`` with a ``toolUse``,
``contentBlockDelta``, ``messageStop``, ``metadata`` with the usage), so everything after the model is Strands' own.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from typing import Any

from strands.models.model import Model

Reply = list[tuple[str, dict[str, Any]]] | str
"""Tool calls ``[(name, arguments), ...]`` or a final text."""


def tool_results(messages: Any) -> int:
    return sum(1 for m in messages for c in m.get("content", []) if "toolResult" in c)


class Scripted(Model):
    """``script(tool results so far) -> reply``, counted; usage grows with the conversation."""

    def __init__(self, script: Callable[[int], Reply], model_id: str = "scripted-model") -> None:
        self.script = script
        self.config: dict[str, Any] = {"model_id": model_id}
        self.calls = 0

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> Any:
        return self.config

    async def structured_output(self, output_model: Any, prompt: Any, system_prompt: Any = None,
                                **kwargs: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError
        yield

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None,
                     **kwargs: Any) -> AsyncGenerator[Any, None]:
        self.calls += 1
        n = tool_results(messages)
        reply = self.script(n)
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(reply, str):
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": reply}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        else:
            for k, (name, arguments) in enumerate(reply):
                yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": f"call_{self.calls}_{k}",
                                                                   "name": name}}}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(arguments)}}}}
                yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        usage = {"inputTokens": 100 + 10 * n, "outputTokens": 20, "totalTokens": 120 + 10 * n}
        yield {"metadata": {"usage": usage, "metrics": {"latencyMs": 5}}}
