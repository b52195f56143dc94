"""A smolagents ToolCallingAgent in a search storm, stopped by spanbreaker before the repeated call runs.

The scripted model keeps asking the same search, which keeps coming back empty. ``tool_repeat`` vetoes the
fifth identical call with an identical result in ``on_start``: the search tool never runs again and the
caller gets ``spanbreaker.Tripped``. Offline; exit code 0 when tripped as expected.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _scripted import ScriptedModel, global_tracing, print_trip, tool_reply

import spanbreaker

MAX_STEPS = 20
SEARCHES: list[str] = []


def main() -> int:
    exporter, processor = global_tracing()

    from smolagents import ToolCallingAgent, tool
    from smolagents.monitoring import LogLevel

    @tool
    def web_search(query: str) -> str:
        """Searches the web.

        Args:
            query: what to look for
        """
        SEARCHES.append(query)
        return "No results found."

    model = ScriptedModel([tool_reply("web_search", {"query": "acme corp 2026 revenue guidance"})])
    agent = ToolCallingAgent(tools=[web_search], model=model, max_steps=MAX_STEPS, verbosity_level=LogLevel.OFF)
    try:
        agent.run("Find ACME's revenue guidance for 2026.")
    except spanbreaker.Tripped as trip:
        print_trip(trip, processor, exporter.get_finished_spans(), model.calls, MAX_STEPS)
        print(f"  searches actually run: {len(SEARCHES)}")
        return 0 if trip.detector == "tool_repeat" else 1
    print(f"unexpected: the run finished without a trip after {model.calls} model calls")
    return 1


if __name__ == "__main__":
    sys.exit(main())
