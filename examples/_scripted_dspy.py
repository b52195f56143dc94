"""A scripted model for DSPy, standing in for the LLM in the DSPy example and tests.

DSPy sends its model calls over HTTP (its own native engine by default, LiteLLM with ``engine="litellm"``), so the
scripted OpenAI-compatible model (:mod:`_scripted_openai`) is served on a loopback port and DSPy is pointed at it:
``dspy.LM("openai/scripted", api_base=f"{url}/v1", api_key="offline", cache=False)`` inside ``with model.serve() as
url``. Nothing else is stubbed: the
requests go through DSPy's real engine, adapter and parser.

``dspy.ReAct`` asks for its next step in ChatAdapter's field format; :func:`react_step` and :func:`answer` write
replies in it. :func:`observations` reads how many tool results the trajectory in a request already holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Step = Callable[[int], str]
"""(tool results the trajectory holds) -> the reply to ReAct's next-step request."""


def react_step(tool: str, arguments: dict[str, Any], thought: str = "I should look this up.") -> str:
    """ReAct's next step: call ``tool`` with ``arguments``."""
    return (f"[[ ## next_thought ## ]]\n{thought}\n\n[[ ## next_tool_name ## ]]\n{tool}\n\n"
            f"[[ ## next_tool_args ## ]]\n{json.dumps(arguments)}\n\n[[ ## completed ## ]]")


def finish() -> str:
    """ReAct's last step: the ``finish`` tool."""
    return react_step("finish", {}, "I have what I need.")


def answer(text: str) -> str:
    """The reply to ReAct's extraction call (``ChainOfThought`` over ``question -> answer``)."""
    return f"[[ ## reasoning ## ]]\nFrom the observations.\n\n[[ ## answer ## ]]\n{text}\n\n[[ ## completed ## ]]"


def observations(messages: list[dict[str, Any]]) -> int:
    """How many tool results the request's trajectory holds (ReAct formats them as ``observation_<n>`` fields)."""
    last = messages[-1].get("content") if messages else None
    return last.count("[[ ## observation_") if isinstance(last, str) else 0


def is_react_step(messages: list[dict[str, Any]]) -> bool:
    """Whether the request asks for ReAct's next step (its instructions name ``next_tool_name``), not for the
    final extraction."""
    first = messages[0].get("content") if messages else None
    return isinstance(first, str) and "next_tool_name" in first


def react_script(step: Step, final: str = "Guidance will be published in March.") -> Callable[..., str]:
    """A script for :class:`ScriptedModel` driving one ``dspy.ReAct``: ``step(tool results so far)`` answers each
    next-step request, ``final`` the extraction."""
    def script(messages: list[dict[str, Any]]) -> str:
        return step(observations(messages)) if is_react_step(messages) else answer(final)
    return script
