"""Tool calls an adapter shows the breaker in process (``spanbreaker.private_calls``), on GenAI ``execute_tool`` spans
that carry no arguments or result of their own (a framework's content capture off), through a real SDK provider:
read only for such a span and only for the tool it names; never written to a span; each concurrent task and each
nested call sees its own."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import spanbreaker
from spanbreaker.private_calls import current, showing

from .spans import Harness, make_harness

ARGUMENTS = '{"query": "weather in Paris"}'


@contextmanager
def tool_span(harness: Harness, tool: str, **attributes: Any) -> Iterator[Any]:
    """An ``execute_tool`` span as the GenAI conventions make it, with content capture off unless given."""
    with harness.provider.get_tracer("agent_framework").start_as_current_span(
            f"execute_tool {tool}", attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                                                **attributes}) as span:
        yield span


def shown_call(harness: Harness, tool: str = "search", shown_as: str = "search", result: str | None = "sunny",
               arguments: str = ARGUMENTS, **attributes: Any) -> None:
    with showing(shown_as, arguments) as shown, tool_span(harness, tool, **attributes):
        shown.result = result


def run_of(harness: Harness, calls: int, **kwargs: Any) -> None:
    tracer = harness.provider.get_tracer("agent_framework")
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"}
    with tracer.start_as_current_span("invoke_agent weather", attributes=agent):
        for n in range(calls):
            with tracer.start_as_current_span("chat model", attributes={"gen_ai.operation.name": "chat"}):
                pass
            shown_call(harness, **{key: value(n) if callable(value) else value for key, value in kwargs.items()})


def test_a_shown_loop_trips_at_the_fifth_call_and_no_span_carries_the_call() -> None:
    harness = make_harness()
    with pytest.raises(spanbreaker.Tripped) as caught:
        run_of(harness, 8)
    assert caught.value.detector == "tool_repeat" and caught.value.evidence["identical_calls"] == 5
    assert len(harness.named("execute_tool search")) == 5
    written = repr([dict(span.attributes or {}) for span in harness.spans()])
    assert "weather in Paris" not in written and "sunny" not in written


@pytest.mark.parametrize("case", ["other tool", "no result", "new results"])
def test_what_is_not_a_shown_repeat_stays_quiet(case: str) -> None:
    harness = make_harness()
    if case == "other tool":  # shown for another tool: not this span's call
        run_of(harness, 8, shown_as="lookup")
    elif case == "no result":  # arguments shown, the result never: unknown, never identical
        run_of(harness, 8, result=None)
    else:
        run_of(harness, 8, result=lambda n: f"update #{n}")
    assert harness.trips == [] and harness.processor.stats.internal_errors == 0


def test_a_spans_own_arguments_and_result_win_over_a_shown_call() -> None:
    """Content capture on: the span says what the call was; a shown call (here with moving arguments) is not read."""
    harness = make_harness()
    with pytest.raises(spanbreaker.Tripped):
        run_of(harness, 8, arguments=lambda n: f'{{"n": {n}}}', result=lambda n: f"r{n}",
               **{"gen_ai.tool.call.arguments": ARGUMENTS, "gen_ai.tool.call.result": "sunny"})


def test_concurrent_and_nested_calls_each_see_their_own() -> None:
    async def call(name: str, arguments: str) -> tuple[str, str | None]:
        with showing(name, arguments):
            await asyncio.sleep(0)
            seen = current()
            assert seen is not None
            return seen.name, seen.arguments

    async def both() -> list[tuple[str, str | None]]:
        return list(await asyncio.gather(call("a", "1"), call("b", "2")))

    assert asyncio.run(both()) == [("a", "1"), ("b", "2")]
    with showing("outer", "o"):
        with showing("inner", "i"):
            assert current() is not None and current().name == "inner"  # type: ignore[union-attr]
        assert current() is not None and current().name == "outer"  # type: ignore[union-attr]
    assert current() is None



def test_a_client_instrumentor_adapter_skips_a_client_it_finds_unimported() -> None:
    """OpenLIT has an instrumentation for every client it supports, installed or not: a client library that is not
    installed (so not imported: an instrumentor imports a client's module as it wraps it) has no call to show, and is
    skipped without importing anything and without a warning."""
    import sys

    from spanbreaker.adapters._client_requests import ClientMethod, compose
    from spanbreaker.adapters.base import PatchLog

    missing = (ClientMethod("spanbreaker_absent_client.resources.chat", "Completions", "create", False),)
    patches = PatchLog()
    compose(patches, "openlit.instrumentation.absent", missing)  # nothing to do, nothing raised
    assert "spanbreaker_absent_client" not in sys.modules
