"""A plain OpenAI tool loop that knows nothing about spanbreaker: ``opentelemetry-instrument python openai_app.py``.

No agent framework: the application calls ``chat.completions.create`` with tools, runs the search the model asks
for and sends the result back, inside one span of its own. The launcher loads OpenInference's OpenAI instrumentor
(the ``[openai]`` extra brings it) and spanbreaker; the model keeps asking for the same search, the breaker reads
the loop from the model calls' prompts and ``spanbreaker.Tripped`` comes out of ``create``. A scripted model (an
in-process HTTP transport) stands in for the LLM. The last stdout line is a JSON summary, the same keys as
``examples/launcher_app.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for the summary helper
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))  # the scripted model

import httpx
import openai
from _scripted_openai import ScriptedModel
from opentelemetry import trace

from tests.launcher.apps._report import note_stop, report

TOOLS = [{"type": "function", "function": {"name": "web_search", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}}}}]
calls = {"tool": 0}


def main() -> int:
    model = ScriptedModel(lambda messages: [("web_search", {"query": "acme 2026 revenue guidance"})])
    client = openai.OpenAI(api_key="offline", base_url="http://scripted.invalid/v1",
                           http_client=httpx.Client(transport=model))
    summary: dict[str, Any] = {"outcome": "answered", "exception": None, "detector": None}
    messages: list[Any] = [{"role": "user", "content": "What is Acme's 2026 revenue guidance?"}]
    try:
        with trace.get_tracer("research-app").start_as_current_span(
                "research", attributes={"openinference.span.kind": "AGENT"}):
            for _ in range(int(os.environ.get("LAUNCHER_APP_MAX_STEPS", "8"))):
                message = client.chat.completions.create(model="gpt-4o-mini", messages=messages,
                                                         tools=TOOLS).choices[0].message  # type: ignore[arg-type]
                if not message.tool_calls:
                    break
                messages.append(message.model_dump(exclude_none=True))
                for call in message.tool_calls:
                    calls["tool"] += 1
                    messages.append({"role": "tool", "tool_call_id": call.id,
                                     "content": "Acme Corp investor relations: guidance for 2026 comes in March."})
            else:
                summary["outcome"] = "limit"
    except BaseException as exc:
        note_stop(summary, exc)
    summary.update(tool_calls=calls["tool"], model_calls=model.calls)
    report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
