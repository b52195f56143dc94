"""How early a plain OpenAI tool loop traced by OpenTelemetry's openai-v2 instrumentor, or by OpenLLMetry's OpenAI
instrumentor, is stopped, in each of the instrumentor's modes, with spanbreaker's adapter off (the instrumentor's spans
alone) and on. Runs in the tier's venv of either (``make .venv/openai-v2/.installed``, ``make
.venv/openllmetry/.installed``)::

    .venv/openai-v2/bin/python benchmarks/client_instrumentor_scenarios.py
    .venv/openllmetry/bin/python benchmarks/client_instrumentor_scenarios.py

The loop (``tests/openai_client/loop.py``: at most 30 model calls, the application running the tool calls) asks for
the same search again and again and gets the same page; with a span of the application's around it, or none (each
model call a trace of its own). A wide run (six different queries, one answer) shows the healthy look-alike. Printed:
model and tool calls that ran, and the detector that stopped the run.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import openai.resources.chat.completions as chat
import pytest

import spanbreaker
from tests.genai_rig import WIDE, Rig, make_rig
from tests.openai_client.loop import run_loop
from tests.openai_client.scripted import Reply, ScriptedModel

if importlib.util.find_spec("opentelemetry.instrumentation.openai_v2") is not None:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    from spanbreaker.adapters.openai_v2 import ADAPTER
    from tests.openai_v2.conftest import MODES, set_mode

    NAME = "openai-v2"
else:  # OpenLLMetry's: its content tracing is its mode
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    from spanbreaker.adapters.openllmetry_openai import ADAPTER

    NAME = "OpenLLMetry"
    MODES = {"content on (default)": {"TRACELOOP_TRACE_CONTENT": "true"},
             "content off": {"TRACELOOP_TRACE_CONTENT": "false"}}

    def set_mode(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
        for name, value in MODES[mode].items():
            monkeypatch.setenv(name, value)


PLAIN = {owner: vars(owner)["create"] for owner in (chat.Completions, chat.AsyncCompletions)}
"""The client's chat methods as it defines them: put back after each run (OpenLLMetry 0.62.4's ``uninstrument`` leaves
its wrappers in place)."""


@contextmanager
def instrumented(mode: str, adapter: bool) -> Iterator[Rig]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        set_mode(monkeypatch, mode)
        rig = make_rig()
        if adapter:
            ADAPTER.instrument(rig.provider, rig.processor)
        OpenAIInstrumentor().instrument(tracer_provider=rig.provider)
        try:
            yield rig
        finally:
            OpenAIInstrumentor().uninstrument()
            ADAPTER.uninstrument()
            for owner, create in PLAIN.items():
                owner.create = create  # type: ignore[method-assign]
            rig.provider.shutdown()


def stuck(_messages: list[dict[str, Any]]) -> Reply:
    return [("search", {"query": "acme 2026 guidance"})]


def wide() -> Any:
    queries = iter(WIDE)
    return lambda _messages: (lambda query: "done" if query is None else [("search", {"query": query})])(
        next(queries, None))


def run(mode: str, adapter: bool, wrap: bool, script: Any) -> tuple[int, int, str]:
    with instrumented(mode, adapter) as rig:
        model = ScriptedModel(script)
        detector = "quiet"
        try:
            ran = run_loop(rig, model, lambda _a, _n: "Acme: guidance will be published in March.", wrap=wrap)
        except spanbreaker.Tripped as trip:
            detector, ran = trip.detector, len(rig.tool_bodies)
        return model.calls, ran, detector


def main() -> None:
    print(f"| {NAME} mode | span around the loop | run | adapter off: model+tool calls | adapter on: model+tool "
          "calls |")
    print("|---|---|---|---|---|")
    for mode in MODES:
        for wrap in (True, False):
            for name, script in (("same search, same page", stuck), ("6 queries, one page (wide)", None)):
                cells = []
                for adapter in (False, True):
                    model_calls, tool_calls, detector = run(mode, adapter, wrap, script or wide())
                    cells.append(f"{model_calls}+{tool_calls} ({detector})")
                print(f"| {mode} | {'yes' if wrap else 'no'} | {name} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
