"""AutoGen's real ``OpenAIChatCompletionClient`` served by the scripted OpenAI-compatible model of the examples
(``examples/_scripted_openai.py``, in process, no network): the only stub in tests/autogen."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from _scripted_openai import Reply, ScriptedModel, tool_results

__all__ = ["MODEL", "Reply", "ScriptedModel", "client_for", "loop", "queries", "scripted", "tool_results"]

MODEL = "gpt-4o-mini-2024-07-18"
"""A model AutoGen knows (its model info), named as the scripted server answers (no "model mismatch" warning)."""


def scripted(script: Callable[[int], Reply]) -> ScriptedModel:
    """``script(tool results in the request so far) -> reply``."""
    return ScriptedModel(lambda messages: script(tool_results(messages)), model=MODEL)


def client_for(model: ScriptedModel) -> Any:
    """AutoGen's OpenAI client, its ``openai.AsyncOpenAI`` served by ``model``."""
    import openai
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    client = OpenAIChatCompletionClient(model=MODEL, api_key="scripted")
    client._client = model.client(openai.AsyncOpenAI, asynchronous=True, api_key="scripted")
    return client


def loop(calls: int = 12) -> Callable[[int], Reply]:
    """The same search, ``calls`` times, then an answer (what the loop would end with if nothing stopped it)."""
    return lambda n: [("search", {"query": "weather in Paris"})] if n < calls else "Sunny."


def queries(qs: list[str]) -> Callable[[int], Reply]:
    return lambda n: [("search", {"query": qs[n]})] if n < len(qs) else "All sunny."
