"""Run by test_adapter in a fresh interpreter: Agno's ``setup_tracing`` first, then ``spanbreaker.instrument()``.

Both set or read the global tracer provider, which the pytest process must not touch. Prints one line:
``status <run status> detector <id> spans_in_db <n>``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agno.agent import Agent
from agno.db.sqlite import SqliteDb
from agno.tracing import setup_tracing
from opentelemetry import trace

import spanbreaker
from spanbreaker.adapters._agno_patches import loaded_models_only
from spanbreaker.adapters.agno import trip_record
from tests.agno.scripted import scripted, tool_call


def fetch(url: str) -> str:
    """Fetch a URL."""
    return "403"


def main() -> None:
    db = SqliteDb(db_file=os.environ["SB_DB"])
    with loaded_models_only():  # only to keep the test fast: skip importing every provider SDK
        setup_tracing(db=db)  # Agno's own provider and instrumentor, made global
    agno_provider = trace.get_tracer_provider()
    processor = spanbreaker.instrument(frameworks=["agno"])  # attaches to it; the instrumentor is left as it is
    assert processor is not None and processor is spanbreaker.processor_for(agno_provider)
    model = scripted(lambda m, i: {"tool_calls": [tool_call("fetch", url="https://x.test")]})
    output = Agent(name="Looper", model=model, tools=[fetch]).run("go")
    record = trip_record(output, processor)
    agno_provider.force_flush()  # type: ignore[attr-defined]
    spans = db.get_spans()
    print("status", output.status.value, "detector", record.detector if record else None,
          "spans_in_db", len(spans) if isinstance(spans, list) else -1)


if __name__ == "__main__":
    main()
