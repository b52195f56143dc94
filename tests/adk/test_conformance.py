"""The Google ADK rows of docs/conformance.md (ADK's own spans, stock and with spanbreaker's adapter, which adds
nothing to them; ADK's default telemetry and ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``),
measured: each cell is pinned here."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import pytest

import spanbreaker

from ..genai_rig import QUERIES, assert_documented, conformance_row, tool_cells
from .scripted import loop, queries, scripted
from .test_agents import healthy_answer, run_async, run_sync, weather_runner

LOOP = 30
"""The scripted loop's length: what runs when nothing stops it."""


def stop_cell(env: Any) -> str:
    model = scripted(loop(LOOP))
    before = len(env.tool_bodies)
    try:
        run_async(weather_runner(env, model))
    except spanbreaker.Tripped:
        calls = len(env.tool_bodies) - before
        try:
            run_sync(weather_runner(env, scripted(loop(LOOP))))
            sync = "`Runner.run` finishes"
        except RuntimeError as exc:
            assert isinstance(exc.__cause__, spanbreaker.Tripped), exc
            sync = f"`Runner.run` raises ADK's `{type(exc).__name__}` caused by it"
        return f"yes, after {calls} tool calls, out of `run_async`; {sync}"
    return f"no: nothing is vetoed ({len(env.tool_bodies) - before} tool calls, the whole scripted loop)"


@pytest.mark.parametrize(("capture", "adapter"), [(None, False), ("SPAN_ONLY", False), (None, True)],
                         ids=["default", "span_only", "adapter-default"])
def test_conformance_row(make_env: Any, capture: str | None, adapter: bool) -> None:
    env = make_env(capture, adapter=adapter)
    run_async(weather_runner(env, scripted(queries(QUERIES)), healthy_answer))
    kind, args, results = tool_cells(env)
    stop = stop_cell(env)
    setup = ("spanbreaker adapter" if adapter else "stock") + (
        ", content capture off (ADK's default)" if capture is None
        else ", `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`")
    row = conformance_row(f"Google ADK {version('google-adk')} (`LlmAgent`, `InMemoryRunner`)",
                          "ADK's own GenAI spans", setup, (kind, args, results, stop))
    print(row)
    assert_documented(row)
