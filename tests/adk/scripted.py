"""A scripted ADK model: a real ``BaseLlm`` subclass whose replies come from a script, the only stub in tests/adk.

``script(n)`` gets the number of function responses in the request so far and returns the function calls to make
(``[(tool, args), ...]``) or the final answer (a string). Every reply ends with ``finish_reason=STOP`` and usage:
``100 + 10 * n`` prompt tokens and 20 output tokens.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

Reply = list[tuple[str, dict[str, Any]]] | str
MODEL = "scripted-model"


class ScriptedLlm(BaseLlm):
    script: Callable[[int], Reply]
    calls: int = 0

    async def generate_content_async(self, llm_request: LlmRequest,
                                     stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        self.calls += 1
        n = sum(1 for c in llm_request.contents for p in (c.parts or []) if p.function_response is not None)
        reply = self.script(n)
        if isinstance(reply, str):
            parts = [types.Part(text=reply)]
        else:
            parts = [types.Part(function_call=types.FunctionCall(name=name, args=args, id=f"call_{n}_{i}"))
                     for i, (name, args) in enumerate(reply)]
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            finish_reason=types.FinishReason.STOP,
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=100 + 10 * n, candidates_token_count=20, total_token_count=120 + 10 * n))


def scripted(script: Callable[[int], Reply]) -> ScriptedLlm:
    return ScriptedLlm(model=MODEL, script=script)


def loop(calls: int = 12) -> Callable[[int], Reply]:
    """The same search, ``calls`` times, then an answer (what the loop would end with if nothing stopped it)."""
    return lambda n: [("search", {"query": "weather in Paris"})] if n < calls else "Sunny."


def queries(qs: list[str]) -> Callable[[int], Reply]:
    return lambda n: [("search", {"query": qs[n]})] if n < len(qs) else "All sunny."
