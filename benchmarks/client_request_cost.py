"""What spanbreaker's request showing (``adapters/_client_requests.py``) adds to a chat call traced by OpenTelemetry's
own OpenAI instrumentor (openai-v2) or OpenLLMetry's. Runs in either tier's venv (``make .venv/openai-v2/.installed``,
``make .venv/openllmetry/.installed``)::

    .venv/openai-v2/bin/python benchmarks/client_request_cost.py [--rounds 5] [--turns 20]
    .venv/openllmetry/bin/python benchmarks/client_request_cost.py

A healthy plain loop around the real OpenAI client (a new query every turn, a result of about 1 KB, ``--turns`` model
calls; the scripted model answers in process over an ``httpx`` transport), on a real SDK ``TracerProvider`` with the
breaker attached and the instrumentor on its defaults (openai-v2: no message content; OpenLLMetry: content
traced). Two shapes: the application records
no tool span (the breaker reads every request's messages: the adapter turns them into JSON) and the application
records a TOOL span per call (the breaker never reads a request; the adapter only shows it). Each shape with the
adapter off (the instrumentor's wrappers alone: the loop goes unread) and on, each variant in a fresh process, the
four alternated ``--rounds`` times; CPU time (``time.process_time``) per model call (the fastest of five blocks of
eight runs in each process), the median over rounds.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from _alternated import alternate, compare

ROOT = Path(__file__).resolve().parents[1]

VARIANTS = (("off", "prompts"), ("on", "prompts"), ("off", "tool spans"), ("on", "tool spans"))

CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[4])
import openai
from opentelemetry.sdk.trace import TracerProvider
from _scripted_openai import ScriptedModel
import spanbreaker
try:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from spanbreaker.adapters.openai_v2 import ADAPTER
except ImportError:  # the OpenLLMetry tier's venv
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor
    from spanbreaker.adapters.openllmetry_openai import ADAPTER
adapter, shape, turns = sys.argv[1], sys.argv[2], int(sys.argv[3])
provider = TracerProvider()
processor = spanbreaker.BreakerSpanProcessor()
provider.add_span_processor(processor)
if adapter == "on":
    ADAPTER.instrument(provider, processor)
OpenAIInstrumentor().instrument(tracer_provider=provider)
tracer = provider.get_tracer("app")
TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}}}}]
model = ScriptedModel(lambda messages: "done" if sum(m.get("role") == "tool" for m in messages) >= turns
                      else [("search", {"query": f"acme filing {len(messages)}"})])
client = model.client(openai.OpenAI, api_key="offline", base_url="http://scripted.invalid/v1")

def run():
    messages = [{"role": "user", "content": "summarise acme's filings"}]
    with tracer.start_as_current_span("research"):
        while True:
            message = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS
                                                     ).choices[0].message
            if not message.tool_calls:
                return
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                result = f"filing {len(messages)}: " + "revenue grew in every segment; " * 32
                if shape == "tool spans":
                    with tracer.start_as_current_span("search", attributes={
                            "openinference.span.kind": "TOOL", "tool.name": "search",
                            "input.value": call.function.arguments}) as span:
                        span.set_attribute("output.value", result)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

for _ in range(3):
    run()
blocks = []
for _ in range(5):
    calls, began = model.calls, time.process_time()
    for _ in range(8):
        run()
    blocks.append((time.process_time() - began) / (model.calls - calls) * 1e6)
assert processor.stats.trips == 0 and processor.stats.internal_errors == 0, processor.stats
print(min(blocks))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "SPANBREAKER_"))}
    env["PYTHONHASHSEED"] = "0"
    times = alternate(CHILD, VARIANTS, args.rounds, [str(args.turns), str(ROOT / "examples")], env)
    print(f"python {sys.version.split()[0]}, {args.turns} model calls a run, {args.rounds} rounds, load average "
          f"{os.getloadavg()[0]:.1f}; CPU time per model call, median over rounds")
    print(f"{'shape':<12} {'adapter off':>12} {'adapter on':>12} {'added':>10} {'ratio (rounds)':>24}")
    for shape in ("prompts", "tool spans"):
        off, on, added, ratio, low, high = compare(times[("off", shape)], times[("on", shape)])
        print(f"{shape:<12} {off:>10.1f}us {on:>10.1f}us {added:>8.1f}us {ratio:>9.3f}x ({low:.3f}-{high:.3f})")


if __name__ == "__main__":
    main()
