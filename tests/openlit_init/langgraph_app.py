"""A LangGraph ReAct agent traced by OpenLIT (``openlit.init()``; with ``--openinference``, by OpenInference's
instrumentor too): its model is ``ChatOpenAI`` on the real OpenAI client, served by the scripted model. One scenario
per process; spans also go to an in-memory exporter on the provider ``openlit.init()`` set. The last stdout line is a
JSON summary.

    python tests/openlit_init/langgraph_app.py [--scenario stuck|wide] [--openinference]
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))  # the scripted model
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the tier's shared setup

from traced import start, summary_of

RECURSION_LIMIT = 60
TOPICS = ["postgres", "sqlite", "redis", "memory", "mongodb", "custom"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=("stuck", "wide"), default="stuck")
    parser.add_argument("--openinference", action="store_true",
                        help="OpenInference's instrumentors trace the framework too")
    args = parser.parse_args()

    import openai
    from _scripted_openai import ScriptedModel, tool_results
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    import spanbreaker

    exporter = start(args.openinference)
    searches: list[str] = []

    @tool
    def web_search(query: str) -> str:
        """Search the web."""
        searches.append(query)
        return f"Docs: {query} checkpointer setup" if args.scenario == "wide" else "Docs: use PostgresSaver"

    def script(messages: list[dict[str, Any]]) -> Any:
        done = tool_results(messages)
        if args.scenario == "stuck":
            return [("web_search", {"query": "langgraph checkpoint postgres"})]
        return [("web_search", {"query": f"langgraph checkpoint {TOPICS[done]}"})] if done < len(TOPICS) else (
            "Use PostgresSaver.")

    scripted = ScriptedModel(script)
    model = ChatOpenAI(model="gpt-4o-mini", api_key="offline", base_url="http://scripted.invalid/v1")
    model.client = scripted.client(openai.OpenAI, api_key="offline",
                                   base_url="http://scripted.invalid/v1").chat.completions
    with warnings.catch_warnings():  # create_react_agent is deprecated in LangGraph 1.x, and still shipped
        warnings.simplefilter("ignore")
        agent = create_react_agent(model, [web_search])
    summary: dict[str, Any] = {"outcome": "answered", "detector": None}
    try:
        agent.invoke({"messages": [("user", "How do I set up a checkpointer?")]}, {"recursion_limit": RECURSION_LIMIT})
    except spanbreaker.Tripped as trip:
        summary.update(outcome="stopped", detector=trip.detector)
    spans = exporter.get_finished_spans()
    summary.update(
        model_calls=scripted.calls, searches=len(searches), topics=len(TOPICS),
        **summary_of(spans))
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
