"""A plain Anthropic tool loop that knows nothing about spanbreaker: ``opentelemetry-instrument python
anthropic_app.py``.

No agent framework: the application calls ``messages.create`` with tools, runs the search the model asks for and
sends the ``tool_result`` back, inside one span of its own. The launcher loads OpenInference's Anthropic
instrumentor (the ``[anthropic]`` extra brings it) and spanbreaker; the model keeps asking for the same search,
the breaker reads the loop from the model calls' prompts and ``spanbreaker.Tripped`` comes out of ``create``. A
scripted model (an in-process HTTP transport) stands in for the LLM. The last stdout line is a JSON summary, the
same keys as ``examples/launcher_app.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the summary helper
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))  # the scripted model

import anthropic
import httpx2
from _scripted_openai import ScriptedModel
from opentelemetry import trace

from tests.launcher.apps._report import note_stop, report

TOOLS: Any = [{"name": "web_search", "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}}]
calls = {"tool": 0}


def main() -> int:
    model = ScriptedModel(lambda messages: [("web_search", {"query": "acme 2026 revenue guidance"})],
                          model="claude-sonnet-4-5")
    client = anthropic.Anthropic(api_key="offline", base_url="http://scripted.invalid",
                                 http_client=httpx2.Client(transport=model.httpx2_transport()))
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    messages: list[Any] = [{"role": "user", "content": "What is Acme's 2026 revenue guidance?"}]
    try:
        with trace.get_tracer("research-app").start_as_current_span(
                "research", attributes={"openinference.span.kind": "AGENT"}):
            for _ in range(int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "8"))):
                reply = client.messages.create(model="claude-sonnet-4-5", max_tokens=512, messages=messages,
                                               tools=TOOLS)
                uses = [block for block in reply.content if block.type == "tool_use"]
                if not uses:
                    break
                messages.append({"role": "assistant", "content": reply.content})
                calls["tool"] += len(uses)
                messages.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": use.id,
                     "content": "Acme Corp investor relations: guidance for 2026 comes in March."} for use in uses]})
            else:
                summary["outcome"] = "limit"
    except BaseException as exc:
        note_stop(summary, exc)
    summary.update(tool_calls=calls["tool"], model_calls=model.calls)
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
