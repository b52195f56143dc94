"""``response="steer"`` on real BeeAI agents (the scripted model is the only stub): a loop detector's first
finding fails the tool call; BeeAI's tool-error path hands the ``spanbreaker:`` message to the model; a model
that changes course answers, one that persists is tripped within a few calls."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from beeai_framework.backend.types import ChatModelInput, ChatModelOutput
from beeai_framework.context import RunContext
from beeai_framework.tools import tool
from beeai_framework.utils.strings import to_json

import spanbreaker

from . import scenarios
from .bee import Answer, Call, Move, ScriptedChatModel
from .conftest import Traced

RAN: list[str] = []


@tool
def lookup(sku: str) -> str:
    """Look up a SKU in the catalogue."""
    RAN.append(sku)
    return "no such SKU"


class ListeningModel(ScriptedChatModel):
    """The scripted model, deciding each move from the prompt it was sent (``react(prompt, index)``)."""

    def __init__(self, react_to: Callable[[str, int], Move], *, react: bool) -> None:
        super().__init__(lambda i: Answer("unused"), react=react)
        self.react_to = react_to
        self.prompts: list[str] = []

    def _take(self, model_input: ChatModelInput) -> None:
        self.prompts.append(to_json(model_input.messages, sort_keys=False))  # tool results included
        self._script = lambda i: self.react_to(self.prompts[-1], i)

    async def _create(self, input: ChatModelInput, run: RunContext) -> ChatModelOutput:
        self._take(input)
        return await super()._create(input, run)

    async def _create_stream(self, input: ChatModelInput, run: RunContext) -> Any:
        self._take(input)
        async for chunk in super()._create_stream(input, run):
            yield chunk


def run(kind: str, model: ListeningModel, tools: list[Any]) -> tuple[spanbreaker.Tripped | None, Any]:
    agent = scenarios.make_agent(kind, model, tools)
    return asyncio.run(asyncio.wait_for(
        scenarios.run_agent(agent, "look up SKU A-1", max_iterations=scenarios.MAX_ITERATIONS), 30.0))


def steered(t: Traced) -> list[Any]:
    return [s for s in t.spans() if (s.attributes or {}).get("spanbreaker.steered")]


REPEATING = ("tool_calling", "react")
"""RequirementAgent answers an identical repeated call itself (it forces ``final_answer``); it is steered on the
paraphrase loop below."""


@pytest.mark.parametrize("kind", REPEATING)
def test_model_that_changes_course_answers(traced: Callable[..., Traced], kind: str) -> None:
    t = traced(response="steer")
    RAN.clear()
    model = ListeningModel(lambda prompt, i: Answer("A-1 is not in the catalogue") if "spanbreaker:" in prompt
                           else Call("lookup", {"sku": "A-1"}), react=kind == "react")
    trip, result = run(kind, model, [lookup])
    assert trip is None, trip
    assert "A-1 is not in the catalogue" in str(result.last_message.text)
    assert len(RAN) == 4  # the fifth identical call was steered: it never ran
    message = next(p for p in model.prompts if "spanbreaker:" in p)
    assert "lookup called 5 times" in message and "Repeating it again stops the run" in message
    (span,) = steered(t)
    assert span.attributes["spanbreaker.detector"] == "tool_repeat"
    assert span.attributes["spanbreaker.blocked"] is True
    assert t.breaker.stats.trips == 0


@pytest.mark.parametrize("kind", REPEATING)
def test_model_that_persists_is_tripped(traced: Callable[..., Traced], kind: str) -> None:
    t = traced(response="steer")
    RAN.clear()
    model = ListeningModel(lambda prompt, i: Call("lookup", {"sku": "A-1"}), react=kind == "react")
    trip, _ = run(kind, model, [lookup])
    assert trip is not None and trip.detector == "tool_repeat"
    assert len(RAN) == 4
    assert any("spanbreaker:" in p for p in model.prompts)
    # steered at the 5th identical call, tripped at the next one (BeeAI's own cycle check answers some calls itself)
    assert model.calls <= 12, model.calls
    assert len(steered(t)) == 1


def paraphrasing(prompt: str, i: int) -> Move:
    return Call("web_search", {"query": scenarios.PARAPHRASES[i % 7]})


@pytest.mark.parametrize("kind", scenarios.AGENT_KINDS)
def test_paraphrase_loop_is_steered_at_the_next_search_then_answers(traced: Callable[..., Traced], kind: str) -> None:
    """input_fixation decides when a search ends: the steer waits for the agent's next search and fails it."""
    t = traced(response="steer")
    model = ListeningModel(lambda prompt, i: Answer("one source: opentelemetry.io") if "spanbreaker:" in prompt
                           else paraphrasing(prompt, i), react=kind == "react")
    trip, result = run(kind, model, [scenarios.web_search])
    assert trip is None, trip
    assert "opentelemetry.io" in str(result.last_message.text)
    message = next(p for p in model.prompts if "spanbreaker:" in p)
    assert "web_search asked 4 near-identical queries" in message
    assert "opentelemetry span processor" not in message.split("spanbreaker:")[1][:300]  # no raw query
    (span,) = steered(t)
    assert span.attributes["spanbreaker.detector"] == "input_fixation"
    assert t.breaker.stats.trips == 0


@pytest.mark.parametrize("kind", scenarios.AGENT_KINDS)
def test_paraphrase_loop_that_persists_is_tripped(traced: Callable[..., Traced], kind: str) -> None:
    t = traced(response="steer")
    model = ListeningModel(paraphrasing, react=kind == "react")
    trip, _ = run(kind, model, [scenarios.web_search])
    assert trip is not None and trip.detector == "input_fixation"
    assert any("spanbreaker:" in p for p in model.prompts)
    assert len(steered(t)) == 1
    searches = [s for s in t.kind("TOOL") if (s.attributes or {}).get("tool.name") == "web_search"]
    assert len(searches) <= 7, len(searches)  # 4 paraphrases, the steered search, one more, the trip
