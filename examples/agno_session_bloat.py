"""A reused Agno session drags its whole history into every prompt; spanbreaker stops the run that overflows.

The agent keeps one ``session_id`` in a SQLite store and sends all earlier runs as history
(``add_history_to_context=True`` with a large ``num_history_runs``). Each run costs more than the last. The
breaker reads the history already in the first LLM call of a run and cancels that run *before* the model is
called, once the history passes ``session_history_messages`` (set low here so the demo is short).

Run offline (a scripted model stands in for the LLM)::

    python examples/agno_session_bloat.py

With ``OPENAI_API_KEY`` set, the agent runs on ``gpt-4o-mini``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("AGNO_TELEMETRY", "false")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import spanbreaker
from spanbreaker.adapters.agno import trip_record

HISTORY_LIMIT = 10
"""Messages of session history allowed into a run's first prompt (the default is 200)."""


def scripted_model() -> Any:
    """Offline stand-in: a long answer each turn; the prompt grows with the history Agno sends."""
    import _scripted_agno as offline

    return offline.scripted_model("assistant", lambda messages, n: offline.response(
        f"Answer {n}: here is a long explanation. " + "Details follow. " * 20,
        usage=(120 * len(messages), 80)))


def calls() -> int:
    from _scripted_agno import CALLS

    return CALLS.get("assistant", 0)


def main() -> int:
    config = spanbreaker.BreakerConfig(session_history_messages=HISTORY_LIMIT)
    processor = spanbreaker.instrument(config=config, frameworks=["agno"])
    assert processor is not None
    from agno.agent import Agent
    from agno.db.sqlite import SqliteDb

    offline = not os.environ.get("OPENAI_API_KEY")
    if offline:
        model = scripted_model()
    else:
        from agno.models.openai import OpenAIChat

        model = OpenAIChat(id="gpt-4o-mini")

    with tempfile.TemporaryDirectory() as folder:
        agent = Agent(name="Assistant", model=model, db=SqliteDb(db_file=str(Path(folder) / "sessions.db")),
                      session_id="customer-42", add_history_to_context=True, num_history_runs=100)
        for turn in range(1, 13):
            before = calls()
            output = agent.run(f"Question {turn}: what changed since my last question?")
            status = output.status.value
            print(f"run {turn:2d}: {status:9s} history runs so far {turn - 1:2d}, model calls {calls() - before}")
            if status == "CANCELLED":
                record = trip_record(output, processor)
                if record is None:
                    print("cancelled, but not by spanbreaker")
                    return 1
                print(f"  detector : {record.detector}")
                print(f"  reason   : {record.reason}")
                print(f"  evidence : {record.evidence}")
                print("  the model was not called for this run; start a new session or summarise the history")
                return 0 if record.detector == "session_bloat" and calls() == before else 1
    print("The session never outgrew the limit.")
    return 1 if offline else 0


if __name__ == "__main__":
    sys.exit(main())
