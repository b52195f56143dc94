"""Managed smolagents agents delegating in a circle, stopped by spanbreaker: the whole tree stops.

An orchestrator (CodeAgent) hands the task to a specialist (ToolCallingAgent), which hands it back to an
orchestrator. ``delegation_cycle`` vetoes the re-entry when that agent's run starts, and ``Tripped`` unwinds
through every level to the caller. Offline; exit code 0 when tripped as expected.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _scripted import ScriptedModel, code_reply, global_tracing, print_trip, tool_reply

import spanbreaker

MAX_STEPS = 10


def main() -> int:
    exporter, processor = global_tracing()

    from smolagents import CodeAgent, ToolCallingAgent
    from smolagents.monitoring import LogLevel

    def orchestrator(model: ScriptedModel, managed: list[object]) -> CodeAgent:
        return CodeAgent(tools=[], model=model, managed_agents=managed, name="orchestrator",
                         description="Plans the report and delegates the research.", max_steps=MAX_STEPS,
                         verbosity_level=LogLevel.OFF)

    back_again = orchestrator(ScriptedModel([code_reply('final_answer("never reached")')]), [])
    specialist_model = ScriptedModel([tool_reply("orchestrator", {"task": "Please plan the report first."})])
    specialist = ToolCallingAgent(tools=[], model=specialist_model, managed_agents=[back_again], name="specialist",
                                  description="Researches figures.", max_steps=MAX_STEPS, verbosity_level=LogLevel.OFF)
    top_model = ScriptedModel([code_reply('print(specialist(task="Collect the quarterly figures."))')])
    top = orchestrator(top_model, [specialist])
    try:
        top.run("Write the quarterly report.")
    except spanbreaker.Tripped as trip:
        calls = top_model.calls + specialist_model.calls + back_again.model.calls  # type: ignore[attr-defined]
        print_trip(trip, processor, exporter.get_finished_spans(), calls, MAX_STEPS,
                   without="without spanbreaker every hand-off starts an agent with a fresh max_steps")
        return 0 if trip.detector == "delegation_cycle" else 1
    print("unexpected: the run finished without a trip")
    return 1


if __name__ == "__main__":
    sys.exit(main())
