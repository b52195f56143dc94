"""A LlamaIndex app that knows nothing about spanbreaker: ``opentelemetry-instrument python llama_index_app.py``.

A ``FunctionAgent`` runs the same search over and over with the same answer (the LlamaIndex tests' scripted model
stands in for the LLM; nothing else is stubbed). Under the launcher the breaker stops it and ``spanbreaker.Tripped``
(as ``LlamaIndexTripped``) comes out of ``await handler``, past LlamaIndex's dispatcher, which swallows what span
handlers raise. The last stdout line is a JSON summary, the same keys as ``examples/launcher_app.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the tests' scripted model

from llama_index.core.workflow.errors import WorkflowRuntimeError

from tests.launcher.apps._report import note_stop, report
from tests.llama_index import scripted


def main() -> int:
    scripted.MAX_ITERATIONS = int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "20"))
    agent, calls = scripted.build("loop")
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    try:
        scripted.run(agent)
    except WorkflowRuntimeError:  # LlamaIndex's own guard: max_iterations reached
        summary.update(outcome="max_iterations")
    except BaseException as exc:
        note_stop(summary, exc)
    summary.update(tool_calls=calls.tools, model_calls=calls.model)
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
