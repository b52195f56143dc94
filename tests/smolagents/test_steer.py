"""``response="steer"`` on real smolagents agents (the scripted model is the only stub).

A loop detector's first finding fails the tool call with ``spanbreaker.Steered``, an ordinary exception:
ToolCallingAgent turns it into the tool's error message, CodeAgent's executor into the step's error, and the
model reads ``spanbreaker: ...`` in its next prompt. A model that changes course finishes; one that persists
meets ``Tripped`` at the next identical call.
"""

from __future__ import annotations

from typing import Any

import pytest
from smolagents import CodeAgent, ToolCallingAgent
from smolagents.monitoring import LogLevel

import spanbreaker

from .conftest import Rig
from .scripted import ScriptedModel, call, code, final_call, final_code
from .test_tool_calling_agent import SEARCHES as RAN
from .test_tool_calling_agent import web_search


def prompt_text(messages: list[Any]) -> str:
    return "\n".join(str(getattr(m, "content", m)) for m in messages)


class Listening:
    """A script that reads each prompt: ``changed`` once the steer message arrived, ``looping`` before."""

    def __init__(self, looping: Any, changed: Any) -> None:
        self.looping, self.changed = looping, changed
        self.prompts: list[str] = []

    def __call__(self, messages: list[Any]) -> Any:
        self.prompts.append(prompt_text(messages))
        return self.changed if self.changed is not None and "spanbreaker:" in self.prompts[-1] else self.looping

    def steer_prompt(self) -> str:
        return next(p for p in self.prompts if "spanbreaker:" in p)


def tool_calling(model: ScriptedModel) -> ToolCallingAgent:
    return ToolCallingAgent(tools=[web_search], model=model, verbosity_level=LogLevel.OFF, max_steps=20)


def code_agent(model: ScriptedModel) -> CodeAgent:
    return CodeAgent(tools=[web_search], model=model, verbosity_level=LogLevel.OFF, max_steps=20)


AGENTS = {
    "tool_calling": (tool_calling, call("web_search", {"query": "spanbreaker pricing"}), final_call("no price found")),
    "code": (code_agent, code('web_search(query="spanbreaker pricing")'), final_code("no price found")),
}


def steered_spans(rig: Rig) -> list[Any]:
    return [s for s in rig.spans() if (s.attributes or {}).get("spanbreaker.steered")]


@pytest.mark.parametrize("kind", sorted(AGENTS))
def test_model_that_changes_course_after_the_message_finishes(rig_factory: Any, kind: str) -> None:
    rig = rig_factory(response="steer")
    make, looping, answer = AGENTS[kind]
    script = Listening(looping, answer)
    RAN.clear()
    result = make(ScriptedModel([script])).run("Find the price")
    assert result == "no price found"
    assert len(RAN) == 4  # the fifth identical call was steered: it never ran
    message = script.steer_prompt()
    assert "web_search called 5 times with identical arguments" in message
    assert "Repeating it again stops the run" in message
    assert rig.marked() == [] and rig.processor.stats.trips == 0
    (span,) = steered_spans(rig)
    attributes = span.attributes or {}
    assert attributes["spanbreaker.detector"] == "tool_repeat" and attributes["spanbreaker.blocked"] is True
    assert [e.name for e in span.events] == ["spanbreaker.steer"]
    marks = [v for k, v in attributes.items() if k.startswith("spanbreaker.")] + [dict(span.events[0].attributes or {})]
    assert "spanbreaker pricing" not in str(marks)  # figures and names, never the arguments
    rig.assert_nothing_lost()


@pytest.mark.parametrize("kind", sorted(AGENTS))
def test_model_that_persists_is_tripped_at_the_next_identical_call(rig_factory: Any, kind: str) -> None:
    rig = rig_factory(response="steer")
    make, looping, _ = AGENTS[kind]
    script = Listening(looping, None)
    model = ScriptedModel([script])
    RAN.clear()
    with pytest.raises(spanbreaker.Tripped) as caught:
        make(model).run("Find the price")
    assert caught.value.detector == "tool_repeat"
    assert len(RAN) == 4 and model.calls == 6  # steered at the 5th call, tripped at the 6th
    assert "spanbreaker:" in script.prompts[-1]
    assert len(steered_spans(rig)) == 1
    vetoed = [s for s in rig.spans() if (s.attributes or {}).get("spanbreaker.tripped")
              and (s.attributes or {}).get("spanbreaker.blocked")]
    assert len(vetoed) == 1 and not (vetoed[0].attributes or {}).get("spanbreaker.steered")
    rig.assert_nothing_lost()


def test_a_different_call_after_the_steer_runs_and_the_next_loop_trips(rig_factory: Any) -> None:
    """A genuinely different call proceeds (it is progress: the repeat count starts afresh); the steer is spent,
    so when the agent falls back into the same loop the next finding trips without a second warning."""
    rig_factory(response="steer")
    same = call("web_search", {"query": "spanbreaker pricing"})
    other = call("web_search", {"query": "spanbreaker licence"})
    model = ScriptedModel([same] * 5 + [other, same])
    RAN.clear()
    with pytest.raises(spanbreaker.Tripped) as caught:
        tool_calling(model).run("Find the price")
    assert caught.value.detector == "tool_repeat"
    assert RAN == ["spanbreaker pricing"] * 4 + ["spanbreaker licence"] + ["spanbreaker pricing"] * 4
    assert model.calls == 11


def test_stop_is_unchanged_by_default(rig: Rig) -> None:
    model = ScriptedModel([call("web_search", {"query": "spanbreaker pricing"})])
    RAN.clear()
    with pytest.raises(spanbreaker.Tripped):
        tool_calling(model).run("Find the price")
    assert model.calls == 5 and steered_spans(rig) == []
