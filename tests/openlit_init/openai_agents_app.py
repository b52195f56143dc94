"""An OpenAI Agents SDK agent traced by OpenLIT (``openlit.init()``: its tracing processor turns the SDK's spans into
OpenTelemetry ones; with ``--openinference``, OpenInference's processor too). One scenario per process; spans also go to
an in-memory exporter on the provider ``openlit.init()`` set. The last stdout line is a JSON summary.

    python tests/openlit_init/openai_agents_app.py [--scenario stuck|wide|handoff] [--openinference]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))  # the scripted model
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the tier's shared setup

from traced import start, summary_of

MAX_TURNS = 30
QUERIES = ["acme guidance", "acme ceo", "acme debt", "acme plants", "acme rating", "acme risks"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=("stuck", "wide", "handoff"), default="stuck")
    parser.add_argument("--openinference", action="store_true",
                        help="OpenInference's instrumentors trace the framework too")
    args = parser.parse_args()

    from _scripted_openai_agents import ScriptedModel
    from agents import Agent, Runner, function_tool

    import spanbreaker

    exporter = start(args.openinference)
    searches: list[str] = []

    @function_tool
    def search(query: str) -> str:
        """Search the web."""
        searches.append(query)
        return "No results." if args.scenario == "stuck" else f"Acme: {query} is in the annual report."

    def research(n: int, _items: Any) -> Any:
        if args.scenario == "stuck":
            return [("search", {"query": QUERIES[0]})]
        return [("search", {"query": QUERIES[n]})] if n < len(QUERIES) else "Acme is fine."

    models = [ScriptedModel(research)]
    agent = Agent(name="researcher", instructions="Find it.", tools=[search], model=models[0])
    if args.scenario == "handoff":  # a triage agent hands the question on once; the researcher answers it
        models.append(ScriptedModel(lambda n, items: [("transfer_to_researcher", {})]))
        agent = Agent(name="triage", instructions="Route the question.", handoffs=[agent], model=models[1])
    summary: dict[str, Any] = {"outcome": "answered", "detector": None}
    try:
        Runner.run_sync(agent, "What is Acme's guidance?", max_turns=MAX_TURNS)
    except spanbreaker.Tripped as trip:
        summary.update(outcome="stopped", detector=trip.detector)
    summary.update(model_calls=sum(m.calls for m in models), searches=len(searches), queries=len(QUERIES),
                   **summary_of(exporter.get_finished_spans()))
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
