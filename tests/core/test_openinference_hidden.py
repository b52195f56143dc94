"""``adapters/openinference.py`` on OpenInference's own tracer (``OITracer``, what every OpenInference instrumentor
traces through), a real SDK provider and the breaker: values a ``TraceConfig`` hides are shown to the breaker in
process, the spans keep exactly what the tracer masked, and a tracer that hides nothing is left as it was."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from openinference.instrumentation import OITracer, TraceConfig

import spanbreaker
from spanbreaker.adapters.openinference import ADAPTER, ShownSpan

from .spans import Harness, make_harness

HIDDEN = TraceConfig(hide_inputs=True, hide_outputs=True)
ARGUMENTS, RESULT = '{"account": "AC-7781"}', "account AC-7781: locked"


@pytest.fixture
def harness() -> Iterator[Harness]:
    made = make_harness()
    ADAPTER.instrument(made.provider, made.processor)
    yield made
    ADAPTER.uninstrument()


def tracer(harness: Harness, config: TraceConfig = HIDDEN) -> Any:
    return OITracer(harness.provider.get_tracer("oi-test"), config)


def tool_call(oi: Any, result: str = RESULT) -> None:
    """A tool span as OpenInference instrumentors make it: kind, name and arguments at start, the result before it
    ends."""
    start = {"openinference.span.kind": "TOOL", "tool.name": "lookup", "input.value": ARGUMENTS}
    with oi.start_as_current_span("lookup", attributes=start) as span:
        span.set_attribute("output.value", result)


def test_a_hidden_loop_is_vetoed_at_its_fifth_call_and_the_spans_stay_masked(harness: Harness) -> None:
    oi = tracer(harness)
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent():
        for _ in range(8):
            tool_call(oi)
    assert caught.value.detector == "tool_repeat" and len(harness.named("lookup")) == 5
    written = repr([(dict(s.attributes or {}), [dict(e.attributes or {}) for e in s.events])
                    for s in harness.spans()])
    assert "7781" not in written and "__REDACTED__" in written
    assert "7781" not in repr(caught.value.evidence) + str(caught.value)


def test_hidden_results_that_move_stay_quiet(harness: Harness) -> None:
    oi = tracer(harness)
    with harness.agent():
        for n in range(8):
            tool_call(oi, result=f"job 1: {n * 10}% done")
    assert harness.trips == []


def test_a_tracer_that_hides_nothing_is_left_as_it_was(harness: Harness) -> None:
    oi = tracer(harness, TraceConfig())
    with oi.start_as_current_span("lookup", attributes={"openinference.span.kind": "TOOL"}) as span:
        assert not isinstance(span, ShownSpan)
    hidden = tracer(harness)
    with hidden.start_as_current_span("lookup", attributes={"openinference.span.kind": "TOOL"}) as span:
        assert isinstance(span, ShownSpan)
    with hidden.start_as_current_span("chat", attributes={"openinference.span.kind": "LLM"}) as span:
        assert not isinstance(span, ShownSpan), "a model call's prompt is shown while it starts, nothing more"


def test_positional_attributes_are_read(harness: Harness) -> None:
    oi = tracer(harness)
    with pytest.raises(spanbreaker.Tripped), harness.agent():
        for _ in range(8):
            span = oi.start_span("lookup", None, None, {"openinference.span.kind": "TOOL", "tool.name": "lookup",
                                                         "input.value": ARGUMENTS})
            span.set_attribute("output.value", RESULT)
            span.end()


def test_uninstrument_puts_the_tracer_back(harness: Harness) -> None:
    patched = OITracer.start_span
    ADAPTER.uninstrument()
    assert OITracer.start_span is not patched
    oi = tracer(harness)
    with oi.start_as_current_span("lookup", attributes={"openinference.span.kind": "TOOL"}) as span:
        assert not isinstance(span, ShownSpan)


class _NoText:
    def __str__(self) -> str:
        raise RuntimeError("no text")


def test_values_with_no_text_leave_the_call_unknown_and_the_application_running(harness: Harness) -> None:
    oi = tracer(harness)
    start = {"openinference.span.kind": "TOOL", "tool.name": "lookup", "input.value": _NoText()}
    with harness.agent():
        for _ in range(8):
            with oi.start_as_current_span("lookup", attributes=start) as span:
                span.set_attribute("output.value", _NoText())
    assert harness.trips == [] and len(harness.named("lookup")) == 8
    assert {(s.attributes or {}).get("input.value") for s in harness.named("lookup")} == {"__REDACTED__"}
