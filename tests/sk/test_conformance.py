"""The Semantic Kernel rows of docs/conformance.md (its own spans, stock and with spanbreaker's adapter; diagnostics
off, its default, and sensitive), measured: each cell is pinned here. The adapter adds nothing to the spans (the tool
cells are the same as stock); it shows the breaker the calls in process."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import version
from typing import Any

import pytest

import spanbreaker

from ..genai_rig import QUERIES, Rig, assert_documented, conformance_row, tool_cells
from ..openai_client.scripted import Reply, ScriptedModel, tool_results
from .scripted import ATTEMPTS, TOOL, SearchPlugin, run_agent, stuck


def healthy(messages: list[dict[str, Any]]) -> Reply:
    done = tool_results(messages)
    return [(TOOL, {"query": QUERIES[done]})] if done < len(QUERIES) else "Sunny everywhere."


def stop_cell() -> str:
    plugin = SearchPlugin()
    try:
        run_agent(ScriptedModel(stuck), plugin)
    except spanbreaker.Tripped:
        return f"yes, after {len(plugin.queries)} tool calls"
    return f"no: nothing is vetoed ({len(plugin.queries)} tool calls, to `maximum_auto_invoke_attempts={ATTEMPTS}`)"


@pytest.mark.parametrize(("diagnostics", "adapter"), [("off", False), ("sensitive", False), ("off", True)],
                         ids=["stock-diagnostics-off", "stock-diagnostics-sensitive", "adapter-diagnostics-off"])
def test_conformance_row(make_env: Callable[..., Rig], diagnostics: str, adapter: bool) -> None:
    rig = make_env(adapter=adapter, diagnostics=diagnostics)
    run_agent(ScriptedModel(healthy), SearchPlugin())
    kind, args, results = tool_cells(rig)
    setup = f"{'spanbreaker adapter' if adapter else 'stock'}, diagnostics {diagnostics}"
    row = conformance_row(f"Semantic Kernel {version('semantic-kernel')} (`ChatCompletionAgent`)",
                          "Semantic Kernel's own GenAI spans", setup, (kind, args, results, stop_cell()))
    print(row)
    assert_documented(row)
