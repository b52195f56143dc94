"""The agent the DSPy tests drive: a real ``dspy.ReAct`` over one ``search`` tool, its model the only stand-in
(the scripted OpenAI-compatible model in ``examples/``, served on loopback to DSPy's real engine).

Three scripts stand for the cases every detector is proven on:

* ``loop``: the same search, with the same arguments, returning the same page, step after step;
* ``fresh``: the same search returning a new page each time (a feed being polled), then ``finish``;
* ``wide``: a different query each step, then ``finish``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline, should DSPy import LiteLLM (its engine)

import dspy
from _scripted_dspy import finish, react_script, react_step
from _scripted_openai import ScriptedModel

MAX_ITERS = 30
"""ReAct's own iteration limit in these tests: what would stop the loop without the breaker."""
STEPS = 10
"""Tool calls the healthy scripts make before ``finish``."""


def loop(_seen: int) -> str:
    return react_step("search", {"query": "acme 2026 guidance"})


def fresh(seen: int) -> str:
    return finish() if seen >= STEPS else react_step("search", {"query": "acme 2026 guidance"})


def wide(seen: int) -> str:
    return finish() if seen >= STEPS else react_step("search", {"query": f"acme guidance source {seen}"})


SCRIPTS: dict[str, Callable[[int], str]] = {"loop": loop, "fresh": fresh, "wide": wide}


@dataclass
class Agent:
    """A ``dspy.ReAct`` on the scripted model; ``searches`` are the tool's bodies run, ``model.calls`` the requests
    the model server received."""

    react: Any
    lm: Any
    model: ScriptedModel
    searches: list[str] = field(default_factory=list)

    def __call__(self, question: str = "When is Acme's 2026 guidance?") -> Any:
        with dspy.context(lm=self.lm):
            return self.react(question=question)

    def run_async(self, question: str = "When is Acme's 2026 guidance?") -> Any:
        async def go() -> Any:
            with dspy.context(lm=self.lm):
                return await self.react.acall(question=question)
        return asyncio.run(go())


@contextmanager
def agent(script: str, *, engine: str | None = None, max_iters: int = MAX_ITERS,
          searches: list[str] | None = None) -> Iterator[Agent]:
    """A ReAct agent on ``SCRIPTS[script]``; ``engine="litellm"`` sends DSPy's model calls through LiteLLM;
    ``searches``: the list the tool records its queries in (a new one by default)."""
    model = ScriptedModel(react_script(SCRIPTS[script]), model="scripted")
    with model.serve() as url:
        extra = {} if engine is None else {"engine": engine}
        lm = dspy.LM("openai/scripted", api_base=f"{url}/v1", api_key="offline", cache=False, **extra)
        searches = [] if searches is None else searches
        same = script == "loop" or script == "wide"

        def search(query: str) -> str:
            """Search the web for the query."""
            searches.append(query)
            if same:
                return "Acme Corp investor relations: guidance for 2026 will be published in March."
            return f"Acme newswire item {len(searches)}: {'update ' * len(searches)}"

        react = dspy.ReAct("question -> answer", tools=[search], max_iters=max_iters)
        yield Agent(react, lm, model, searches)
