"""Nothing the user, the model or the data wrote reaches what spanbreaker writes.

Error messages and status descriptions are free text: they carry the model's code (smolagents puts the failing
line in the message), looked-up keys and records. The trip reason, its evidence, ``Tripped``, the ``spanbreaker.*``
span attributes and events and the log name an error only by a class that really is one (the structured
``exception.type``, or a word of the text that is an exception class of this process).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from opentelemetry.trace import Status, StatusCode

import spanbreaker
from spanbreaker.conventions import exception_class
from spanbreaker.conventions.read import root_error

from .spans import Harness, make_harness

SECRET = "ProjectApollo"
"""Stands for user data: a key, a customer id, a line of the model's code."""
MODEL_CODE = f'rows = lookup_table["{SECRET}-4471"]; print(rows)'


def written_by_spanbreaker(harness: Harness, caught: BaseException | None, caplog: pytest.LogCaptureFixture) -> str:
    """Everything spanbreaker wrote: its span attributes and events, trips, the exception, the log."""
    parts: list[Any] = [caplog.text]
    for span in harness.spans():
        parts += [(k, v) for k, v in (span.attributes or {}).items() if k.startswith("spanbreaker")]
        parts += [(e.name, dict(e.attributes or {})) for e in span.events if e.name.startswith("spanbreaker")]
    for record in harness.trips:
        parts += [record.detector, record.reason, record.evidence, record.to_dict() if hasattr(record, "to_dict")
                  else vars(record)]
    if caught is not None:
        parts += [str(caught), repr(caught), getattr(caught, "reason", ""), getattr(caught, "evidence", {})]
    return repr(parts)


def failing_steps(harness: Harness, message: str, etype: str = "smolagents.utils.AgentExecutionError",
                  steps: int = 9) -> BaseException | None:
    try:
        with harness.agent():
            for n in range(1, steps + 1):
                harness.failed_step(n, message, etype=etype)
    except spanbreaker.Tripped as exc:
        return exc
    return None


@pytest.mark.parametrize("message", [
    # a code-repair loop over a KeyError whose key looks like a class name
    f"Code execution failed at line '{MODEL_CODE}' due to: InterpreterError: Could not index {{'a': 1}} with "
    f"'{SECRET}Error': KeyError: '{SECRET}Error'",
    # the looked-up key shaped like Python's "Class: message"
    f"Code execution failed at line '{MODEL_CODE}' due to: KeyError: '{SECRET}Exception: x'",
    # a tool error through ToolCallingAgent's wrapper, with the arguments in it
    f"Error executing tool 'lookup' with arguments {{'key': '{SECRET}Error: 1'}}: KeyError: '{SECRET}Error'\n"
    "Please try again or use another tool",
])
def test_a_wrapped_error_is_named_by_its_real_class(message: str, caplog: pytest.LogCaptureFixture) -> None:
    harness = make_harness()
    with caplog.at_level(logging.DEBUG, logger="spanbreaker"):
        caught = failing_steps(harness, message)
    assert isinstance(caught, spanbreaker.Tripped) and caught.detector == "error_loop"
    assert caught.evidence["exception_type"] == "KeyError"
    assert SECRET not in written_by_spanbreaker(harness, caught, caplog)
    assert "lookup_table" not in written_by_spanbreaker(harness, caught, caplog)


def test_a_status_description_alone_names_no_class(caplog: pytest.LogCaptureFixture) -> None:
    """A failed span with only a description: its first word is data (``"<customer>: record lookup failed"``)."""
    harness = make_harness()
    caught: BaseException | None = None
    with caplog.at_level(logging.DEBUG, logger="spanbreaker"):
        try:
            with harness.agent():
                for n in range(1, 10):
                    with harness.step(n) as span:
                        harness.llm()
                        span.set_status(Status(StatusCode.ERROR, f"{SECRET}: record lookup failed"))
        except spanbreaker.Tripped as exc:
            caught = exc
    assert isinstance(caught, spanbreaker.Tripped) and caught.evidence["exception_type"] == "Error"
    assert SECRET not in written_by_spanbreaker(harness, caught, caplog)


def test_a_malformed_exception_type_is_not_copied(caplog: pytest.LogCaptureFixture) -> None:
    harness = make_harness()
    with caplog.at_level(logging.DEBUG, logger="spanbreaker"):
        caught = failing_steps(harness, "lookup failed", etype=f"{SECRET} customer 4471 not found")
    assert isinstance(caught, spanbreaker.Tripped) and caught.evidence["exception_type"] == "Error"
    assert SECRET not in written_by_spanbreaker(harness, caught, caplog)


def test_model_written_code_and_results_stay_out(caplog: pytest.LogCaptureFixture) -> None:
    """The model's code (LLM output), the tool's arguments and results, an error text naming them: none leaks."""
    harness = make_harness()
    caught: BaseException | None = None
    with caplog.at_level(logging.DEBUG, logger="spanbreaker"):
        try:
            with harness.agent(task=f"find {SECRET}"):
                for n in range(1, 12):
                    with harness.step(n):
                        harness.llm(input_value=f"fix {SECRET}", **{"output.value": MODEL_CODE})
                        harness.tool("python_interpreter", {"code": MODEL_CODE}, output=f"{SECRET} not found")
        except spanbreaker.Tripped as exc:
            caught = exc
    assert caught is not None  # the repeated call trips
    assert SECRET not in written_by_spanbreaker(harness, caught, caplog)


def test_a_real_key_error_is_a_key_error() -> None:
    harness = make_harness()
    caught: BaseException | None = None
    try:
        with harness.agent(name="Loop_Agent"):
            for _ in range(6):
                harness.tool("fetch", {"key": "k"}, error=KeyError(f"{SECRET}Error"))
    except spanbreaker.Tripped as exc:
        caught = exc
    assert isinstance(caught, spanbreaker.Tripped) and caught.evidence.get("exception_type") == "KeyError"
    assert SECRET not in repr((caught.reason, caught.evidence))


class QuotaExceeded(Exception):
    """An application's own exception class: a class of this process, so its name may be read from text."""


@pytest.mark.parametrize(("etype", "message", "expected"), [
    ("smolagents.utils.AgentExecutionError", "due to: QuotaExceeded: 3 of 3", "QuotaExceeded"),
    ("smolagents.utils.AgentExecutionError", "due to: acme.errors.FrobnicateError: 404", "AgentExecutionError"),
    ("smolagents.utils.AgentExecutionError", f"due to: InterpreterError: {SECRET}Error: x", "AgentExecutionError"),
    ("KeyError", f"'{SECRET}Error'", "KeyError"),
    ("json.decoder.JSONDecodeError", "Expecting value", "JSONDecodeError"),
    ("x" * 600, "", "Error"),
])
def test_root_error_reads_classes_only(etype: str, message: str, expected: str) -> None:
    class Event:
        name = "exception"
        attributes = {"exception.type": etype, "exception.message": message}

    assert root_error([Event()], Status(StatusCode.ERROR), frozenset()) == expected


def test_exception_class_names_are_classes() -> None:
    assert exception_class.is_exception_class("KeyError")
    assert exception_class.is_exception_class("QuotaExceeded")
    assert not exception_class.is_exception_class(f"{SECRET}Error")
    assert not exception_class.is_exception_class("not a name")
    assert exception_class.from_type_field("smolagents.utils.AgentExecutionError") == "AgentExecutionError"
    assert exception_class.from_type_field("a b") is None

    assert not exception_class.is_exception_class("LateDefinedError")
    late = type("LateDefinedError", (Exception,), {})  # defined after a miss: found once the classes change
    exception_class._misses.discard("LateDefinedError")
    assert exception_class.is_exception_class("LateDefinedError") and late
