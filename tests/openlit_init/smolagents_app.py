"""A smolagents agent traced by OpenLIT (``openlit.init()``; with ``--openinference``, by OpenInference's
instrumentor too), with the breaker attached by ``spanbreaker.instrument()``. One scenario per process; spans also go
to an in-memory exporter on the provider ``openlit.init()`` set. The last stdout line is a JSON summary.

    python tests/openlit_init/smolagents_app.py [--scenario search-storm|wide-search|code-repair|code-progress]
        [--openinference]
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

MAX_STEPS = 20
GUESSES = ["total", "sum", "amount", "value", "grand_total", "revenue", "count", "price"]
TOPICS = ["revenue", "guidance", "ceo", "plants", "debt", "rating"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=("search-storm", "wide-search", "code-repair", "code-progress"),
                        default="search-storm")
    parser.add_argument("--openinference", action="store_true",
                        help="OpenInference's instrumentors trace the framework too")
    args = parser.parse_args()

    import openai
    from _scripted_openai import ScriptedModel
    from smolagents import CodeAgent, OpenAIServerModel, ToolCallingAgent, tool
    from smolagents.monitoring import LogLevel

    import spanbreaker

    exporter = start(args.openinference)
    searches: list[str] = []

    @tool
    def web_search(query: str) -> str:
        """Searches the web.

        Args:
            query: what to look for
        """
        searches.append(query)
        return "No results found." if args.scenario == "search-storm" else f"Acme: {query} is in the annual report."

    def turns(messages: list[dict[str, Any]]) -> int:
        return sum(1 for m in messages if m.get("role") == "assistant")

    def code(key: str) -> str:
        return f'Thought: try "{key}".\n<code>\nreport = {{"q1": 120, "q2": 135}}\nprint(report["{key}"])\n</code>'

    def script(messages: list[dict[str, Any]]) -> Any:
        turn = turns(messages)
        if args.scenario == "search-storm":
            return [("web_search", {"query": "acme corp 2026 revenue guidance"})]
        if args.scenario == "wide-search":
            return ([("web_search", {"query": f"acme {TOPICS[turn]}"})] if turn < len(TOPICS)
                    else [("final_answer", {"answer": "Acme is fine."})])
        if args.scenario == "code-repair":
            return code(GUESSES[turn % len(GUESSES)])
        if turn < 3:  # code-progress: three misses, then the right keys and the answer
            return code(GUESSES[turn])
        return 'Thought: found it.\n<code>\nfinal_answer(120 + 135)\n</code>'

    scripted = ScriptedModel(script)
    model = OpenAIServerModel(model_id="gpt-4o-mini", api_key="offline", api_base="http://scripted.invalid/v1")
    model.client = scripted.client(openai.OpenAI, api_key="offline", base_url="http://scripted.invalid/v1")
    agent: Any
    if args.scenario in ("search-storm", "wide-search"):
        agent = ToolCallingAgent(tools=[web_search], model=model, max_steps=MAX_STEPS, verbosity_level=LogLevel.OFF)
    else:
        agent = CodeAgent(tools=[], model=model, max_steps=MAX_STEPS, verbosity_level=LogLevel.OFF)
    summary: dict[str, Any] = {"outcome": "answered", "detector": None}
    try:
        agent.run("Find ACME's revenue guidance for 2026.")
    except spanbreaker.Tripped as trip:
        summary.update(outcome="stopped", detector=trip.detector)
    spans = exporter.get_finished_spans()
    summary.update(
        model_calls=scripted.calls, searches=len(searches),
        steps=sum(1 for s in spans if " step_" in s.name),
        **summary_of(spans))
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
