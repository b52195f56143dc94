"""Instructor's structured-output retries, on the real OpenAI client traced by OpenInference's OpenAI instrumentor
(and, where said, OpenInference's Instructor instrumentor around each ``create``). In tool mode Instructor re-asks
with the model's own function call and a tool result that starts ``Validation Error found:``; in its JSON modes with
the model's answer and a user message that starts ``Correct your JSON ONLY RESPONSE``. The breaker reads each
prompt's last turn, so a retry loop is a tool loop: the same invalid output again and again (``tool_repeat``), or a
different invalid output every time (``tool_streak`` on the failed validations, ``max_retries`` set far above what a
fix needs). A model that fixes its output after a re-ask or two, and a batch of extractions in one trace that
each need a re-ask, stay quiet. The model is the only stub (an in-process HTTP transport)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import instructor
import openai
import pytest
from instructor.core import InstructorRetryException
from openinference.instrumentation.instructor import InstructorInstrumentor
from openinference.instrumentation.openai import OpenAIInstrumentor

import spanbreaker
from spanbreaker.signals import Kind, classify

from ..genai_rig import Person, Rig, make_rig
from ..openai_client.scripted import ScriptedModel, tool_results

LAYERS = {"openai": (OpenAIInstrumentor,), "openai+instructor": (OpenAIInstrumentor, InstructorInstrumentor)}
"""The OpenAI instrumentor alone (each model call a trace of its own), or with OpenInference's Instructor
instrumentor (a CHAIN span around each ``create``, the trace's root)."""


@pytest.fixture(params=sorted(LAYERS))
def make_env(request: pytest.FixtureRequest) -> Iterator[Callable[..., Rig]]:
    made: list[tuple[Rig, list[Any]]] = []

    def make(**overrides: Any) -> Rig:
        assert not made, "one environment per test"
        rig = make_rig(**overrides)
        instrumentors = [layer() for layer in LAYERS[request.param]]
        for instrumentor in instrumentors:
            instrumentor.instrument(tracer_provider=rig.provider)
        made.append((rig, instrumentors))
        return rig

    yield make
    for rig, instrumentors in made:
        for instrumentor in reversed(instrumentors):
            instrumentor.uninstrument()
        rig.provider.shutdown()


def assert_trip_marked(rig: Rig, detector: str) -> None:
    """The vetoed model call and the root spans above it carry the trip."""
    blocked = rig.blocked()
    assert len(blocked) == 1 and classify(blocked[0].name, blocked[0].attributes or {}) is Kind.LLM
    assert (blocked[0].attributes or {}).get("spanbreaker.detector") == detector
    roots = [s for s in rig.spans() if s.parent is None]
    assert any((s.attributes or {}).get("spanbreaker.tripped") for s in roots)


def extract(model: ScriptedModel, text: str = "Extract: jason is 25", retries: int = 15) -> Person:
    client = instructor.from_openai(model.client(openai.OpenAI, api_key="scripted"))
    person: Person = client.chat.completions.create(
        model="gpt-4o-mini", response_model=Person, max_retries=retries,
        messages=[{"role": "user", "content": text}])
    return person


def answers(reply: Callable[[int, list[dict[str, Any]]], dict[str, Any]]) -> ScriptedModel:
    """A model answering each attempt with ``reply(failed attempts so far, messages)`` as the ``Person`` call."""
    return ScriptedModel(lambda messages: [("Person", reply(tool_results(messages), messages))])


def test_the_same_invalid_output_again_and_again_is_stopped(make_env: Callable[..., Rig]) -> None:
    rig = make_env()
    model = answers(lambda _failed, _messages: {"name": "jason", "age": 25})
    with pytest.raises(spanbreaker.Tripped) as raised:
        extract(model)
    assert raised.value.detector == "tool_repeat" and raised.value.evidence["calls_from_prompt"] is True
    assert model.calls == 5, "the 6th request, re-asking after the 5th identical output, is vetoed (16 stock)"
    assert_trip_marked(rig, "tool_repeat")
    rig.assert_nothing_lost()


def test_a_new_invalid_output_every_time_is_stopped_on_the_failed_validations(make_env: Callable[..., Rig]) -> None:
    rig = make_env()
    model = answers(lambda failed, _messages: {"name": f"jason {failed}", "age": 25})
    with pytest.raises(spanbreaker.Tripped) as raised:
        extract(model)
    trip = raised.value
    assert trip.detector == "tool_streak" and trip.evidence["consecutive_calls"] == 10
    assert model.calls == 10, "the 11th request is vetoed (max_retries=15: 16 stock)"
    assert_trip_marked(rig, "tool_streak")
    rig.assert_nothing_lost()


def test_instructor_s_own_limit_ends_a_short_retry_loop_first(make_env: Callable[..., Rig]) -> None:
    """``max_retries=3`` (Instructor's default): four failed attempts and Instructor's own exception, no trip."""
    rig = make_env()
    model = answers(lambda failed, _messages: {"name": f"jason {failed}", "age": 25})
    with pytest.raises(InstructorRetryException):
        extract(model, retries=3)
    assert model.calls == 4
    rig.assert_quiet()


def test_a_fix_after_two_re_asks_is_quiet(make_env: Callable[..., Rig]) -> None:
    rig = make_env()
    model = answers(lambda failed, _messages: {"name": "JASON" if failed >= 2 else "jason", "age": 25})
    assert extract(model).name == "JASON"
    assert model.calls == 3
    rig.assert_quiet()


def test_a_batch_of_extractions_each_re_asked_once_is_quiet(make_env: Callable[..., Rig]) -> None:
    """Thirty extractions in one trace (the application's span around the batch), each valid at its second attempt:
    sixty model calls, thirty failed validations, never two in a row within one ``create``. Each ``create`` is a new
    request, so the breaker's history starts afresh (a new user message), and the streak never builds."""
    def reply(failed: int, messages: list[dict[str, Any]]) -> dict[str, Any]:
        name = str(messages[0]["content"]).rsplit(" ", 1)[-1]
        return {"name": name.upper() if failed else name, "age": 25}

    rig = make_env()
    model = answers(reply)
    with rig.provider.get_tracer("batch").start_as_current_span("extract-batch"):
        people = [extract(model, f"Extract: person{n}", retries=3) for n in range(30)]
    assert [p.name for p in people] == [f"PERSON{n}" for n in range(30)] and model.calls == 60
    rig.assert_quiet()


def test_the_model_call_budget_vetoes_the_next_attempt(make_env: Callable[..., Rig]) -> None:
    """Budgets count per trace: the application's span around the ``create`` makes its attempts one trace (with
    the OpenAI instrumentor alone, each attempt is otherwise a trace of its own)."""
    rig = make_env(max_model_calls=3)
    model = answers(lambda failed, _messages: {"name": f"jason {failed}", "age": 25})
    with pytest.raises(spanbreaker.Tripped) as raised, rig.provider.get_tracer("app").start_as_current_span("job"):
        extract(model)
    assert raised.value.detector == "call_budget" and model.calls == 3
    assert_trip_marked(rig, "call_budget")


def test_an_anthropic_retry_loop_is_read_the_same_way() -> None:
    """``instructor.from_anthropic`` re-asks with a ``tool_result`` block flagged ``is_error`` whose text starts
    ``Validation Error found:``: the text names the failure (a malformed output, like OpenAI's re-ask), so the run
    is judged as on OpenAI, not as four failing tool calls (``error_loop``, which tripped at the 5th attempt)."""
    import anthropic
    from openinference.instrumentation.anthropic import AnthropicInstrumentor

    rig = make_rig()
    AnthropicInstrumentor().instrument(tracer_provider=rig.provider)
    model = ScriptedModel(lambda messages: [("Person", {"name": f"jason {tool_results(messages)}", "age": 25})],
                          model="claude-sonnet-4-5")
    client = instructor.from_anthropic(model.client(anthropic.Anthropic, api_key="scripted",
                                                    base_url="http://scripted.invalid"))
    try:
        with pytest.raises(spanbreaker.Tripped) as raised:
            client.messages.create(model="claude-sonnet-4-5", max_tokens=256, response_model=Person, max_retries=15,
                                   messages=[{"role": "user", "content": "Extract: jason is 25"}])
    finally:
        AnthropicInstrumentor().uninstrument()
        rig.provider.shutdown()
    assert raised.value.detector == "tool_streak" and model.calls == 10


JSON_MODES = ["JSON", "MD_JSON", "JSON_SCHEMA"]
"""Instructor's modes where the model answers with text, not a tool call: a failed answer is re-asked in a user
message (``Correct your JSON ONLY RESPONSE, based on the following errors: ...``)."""


def extract_json(model: ScriptedModel, mode: str, retries: int = 15) -> Person:
    client = instructor.from_openai(model.client(openai.OpenAI, api_key="scripted"),
                                    mode=getattr(instructor.Mode, mode))
    person: Person = client.chat.completions.create(
        model="gpt-4o-mini", response_model=Person, max_retries=retries,
        messages=[{"role": "user", "content": "Extract: jason is 25"}])
    return person


def json_answers(name: Callable[[int], str]) -> ScriptedModel:
    """A model answering each attempt with a ``Person`` as JSON text, named ``name(re-asks so far)``."""
    def reply(messages: list[dict[str, Any]]) -> str:
        reasks = sum(1 for m in messages if str(m.get("content")).startswith("Correct your JSON ONLY RESPONSE"))
        return json.dumps({"name": name(reasks), "age": 25})

    return ScriptedModel(reply)


@pytest.mark.parametrize("mode", JSON_MODES)
def test_json_mode_the_same_invalid_output_again_and_again_is_stopped(make_env: Callable[..., Rig], mode: str) -> None:
    rig = make_env()
    model = json_answers(lambda _reasks: "jason")
    with pytest.raises(spanbreaker.Tripped) as raised:
        extract_json(model, mode)
    trip = raised.value
    assert trip.detector == "tool_repeat" and trip.evidence["calls_from_prompt"] is True
    assert trip.evidence["tool"] == "structured_output"
    assert model.calls == 5, "the 6th request, re-asking after the 5th identical answer, is vetoed (16 stock)"
    assert_trip_marked(rig, "tool_repeat")
    rig.assert_nothing_lost()


@pytest.mark.parametrize("mode", JSON_MODES)
def test_json_mode_a_new_invalid_output_every_time_is_stopped(make_env: Callable[..., Rig], mode: str) -> None:
    rig = make_env()
    model = json_answers(lambda reasks: f"jason {reasks}")
    with pytest.raises(spanbreaker.Tripped) as raised:
        extract_json(model, mode)
    assert raised.value.detector == "tool_streak" and raised.value.evidence["consecutive_calls"] == 10
    assert model.calls == 10
    rig.assert_nothing_lost()


@pytest.mark.parametrize("mode", JSON_MODES)
def test_json_mode_a_fix_after_two_re_asks_is_quiet(make_env: Callable[..., Rig], mode: str) -> None:
    rig = make_env()
    model = json_answers(lambda reasks: "JASON" if reasks >= 2 else "jason")
    assert extract_json(model, mode).name == "JASON" and model.calls == 3
    rig.assert_quiet()


def test_json_mode_instructor_s_own_limit_ends_a_short_retry_loop_first(make_env: Callable[..., Rig]) -> None:
    rig = make_env()
    model = json_answers(lambda _reasks: "jason")
    with pytest.raises(InstructorRetryException):
        extract_json(model, "JSON", retries=3)
    assert model.calls == 4
    rig.assert_quiet()


def test_json_mode_a_batch_of_extractions_each_re_asked_once_is_quiet(make_env: Callable[..., Rig]) -> None:
    """Thirty JSON-mode extractions in one trace, each valid at its second attempt: every ``create`` starts with a
    new user request, so the failed validations never make a streak."""
    def reply(messages: list[dict[str, Any]]) -> str:
        name = str(messages[1]["content"]).rsplit(" ", 1)[-1]
        reasked = any(str(m.get("content")).startswith("Correct your JSON") for m in messages)
        return json.dumps({"name": name.upper() if reasked else name, "age": 25})

    rig = make_env()
    model = ScriptedModel(reply)

    def extract_one(n: int) -> Person:
        client = instructor.from_openai(model.client(openai.OpenAI, api_key="scripted"), mode=instructor.Mode.JSON)
        person: Person = client.chat.completions.create(
            model="gpt-4o-mini", response_model=Person, max_retries=3,
            messages=[{"role": "user", "content": f"Extract: person{n}"}])
        return person

    with rig.provider.get_tracer("batch").start_as_current_span("extract-batch"):
        people = [extract_one(n) for n in range(30)]
    assert [p.name for p in people] == [f"PERSON{n}" for n in range(30)] and model.calls == 60
    rig.assert_quiet()
