"""A LangGraph app that knows nothing about spanbreaker: ``opentelemetry-instrument python langgraph_app.py``.

A prebuilt ReAct agent searches for the same thing over and over with the same answer (the LangGraph tests'
scripted model stands in for the LLM; nothing else is stubbed). Under the launcher the breaker stops it and
``spanbreaker.Tripped`` comes out of ``invoke``. The last stdout line is a JSON summary, the same keys as
``examples/launcher_app.py``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the tests' scripted model

from langgraph.errors import GraphRecursionError

from tests.langgraph.scripted import build
from tests.launcher.apps._report import note_stop, report


def main() -> int:
    graph, calls = build("react", "loop")
    limit = 2 * int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "8")) + 1  # LangGraph's guard: two steps a turn
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    try:
        with contextlib.suppress(GraphRecursionError):
            graph.invoke({"messages": [("user", "What's the weather in Paris?")]}, {"recursion_limit": limit})
    except BaseException as exc:
        note_stop(summary, exc)
    summary.update(tool_calls=calls.tools, model_calls=calls.model)
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
