"""An Agno Workflow step loops; spanbreaker ends the workflow at that step.

A two-step pipeline: a researcher agent fetches a status page, then a writer agent drafts the incident note. The
page answers "403 Forbidden" every time and the researcher keeps asking for it. Agno has no limit on model
turns; and when an agent step fails, an Agno workflow goes on to its next step, so the writer would draft a note
from nothing. The breaker sees the same fetch with the same result, cancels the researcher's run and the
workflow with it: the workflow returns CANCELLED at the research step and the writer is never called.

Run offline (a scripted model stands in for the LLM)::

    python examples/agno_workflow_step_loop.py

With ``OPENAI_API_KEY`` set, the same workflow runs on ``gpt-4o-mini`` (a real model may or may not loop).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("AGNO_TELEMETRY", "false")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import spanbreaker
from spanbreaker.adapters.agno import trip_record

TURNS = 20
"""How often the scripted researcher would ask for the page without the breaker."""


def fetch(url: str) -> str:
    """Fetch a web page."""
    return "403 Forbidden"


def main() -> int:
    processor = spanbreaker.instrument(frameworks=["agno"])  # global provider (created if none)
    assert processor is not None
    from agno.agent import Agent
    from agno.workflow import Step, Workflow

    offline = not os.environ.get("OPENAI_API_KEY")
    if offline:
        from _scripted_agno import CALLS, response, scripted_model

        def research(messages: Any, n: int) -> Any:
            if n > TURNS:
                return response("The status page is unreachable.")
            return response(tool_calls=[{"id": f"call_{n}", "type": "function", "function": {
                "name": "fetch", "arguments": json.dumps({"url": "https://status.example.com/incident/42"})}}])

        researcher_model: Any = scripted_model("researcher", research)
        writer_model: Any = scripted_model("writer", lambda messages, n: response("Incident note: ..."))
    else:
        from agno.models.openai import OpenAIChat

        researcher_model, writer_model = OpenAIChat(id="gpt-4o-mini"), OpenAIChat(id="gpt-4o-mini")

    workflow = Workflow(name="Incident Note", steps=[
        Step(name="research", agent=Agent(name="Researcher", model=researcher_model, tools=[fetch],
                                          instructions="Read the incident status page before anything else.")),
        Step(name="write", agent=Agent(name="Writer", model=writer_model,
                                       instructions="Draft the incident note from the research.")),
    ])
    output = workflow.run("Write the note for incident 42.")

    print(f"Workflow '{workflow.name}' finished with status {output.status.value}")
    record = trip_record(output, processor)
    if record is None:
        print("The breaker did not trip: no loop in this run.")
        return 0 if not offline else 1
    from _scripted_agno import print_record

    print_record(record)
    print(f"  steps run: {[step.step_name for step in output.step_results or []]}")
    if offline:
        researcher, writer = CALLS.get("researcher", 0), CALLS.get("writer", 0)
        print(f"  model calls made: researcher {researcher}, writer {writer}; without the breaker the researcher "
              f"would have asked {TURNS} times, then the writer drafted a note from nothing")
        return 0 if record.detector == "tool_repeat" and output.status.value == "CANCELLED" and writer == 0 else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
