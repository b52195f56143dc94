"""One of several processes pushing many concurrent traces through the shared state (real SDK spans).

Every trace gets a weight w (its index + 1) and each model call in it spends exactly w tokens, so a count
that leaked between traces shows up as tokens != w * model calls. Prints, per trace, what this process sent.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

import spanbreaker
from spanbreaker.config import DETECTOR_IDS

SCOPE = "openinference.instrumentation.smolagents"


def main(spec: dict[str, Any]) -> dict[str, Any]:
    keep = {"token_budget", "call_budget"}
    config = spanbreaker.BreakerConfig(
        state=spec["state"], state_prefix=spec["prefix"], state_staleness_s=spec.get("staleness", 0.1),
        trace_ttl_s=spec["ttl"], max_tokens=10**12, max_model_calls=10**9, max_tool_calls=10**9,
        disabled_detectors=frozenset(DETECTOR_IDS - keep))
    processor = spanbreaker.BreakerSpanProcessor(config)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = provider.get_tracer(SCOPE)
    traces = [int(h, 16) for h in spec["traces"]]
    Path(spec["ready"]).touch()
    deadline = time.monotonic() + 30
    while not Path(spec["go"]).exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    go_at = time.time()
    roots = []
    for tid in traces:
        parent = otel_trace.set_span_in_context(
            NonRecordingSpan(SpanContext(tid, 0x1000 + spec["index"], is_remote=True, trace_flags=TraceFlags(1))))
        roots.append(tracer.start_span("worker.run", context=parent,
                                       attributes={"openinference.span.kind": "AGENT", "input.value": "{}"}))
    sent = {f"{tid:032x}": [0, 0, 0] for tid in traces}
    deadline = time.monotonic() + spec["seconds"]
    rounds = 0
    errors = 0
    while time.monotonic() < deadline:
        for number, (tid, root) in enumerate(zip(traces, roots, strict=True)):
            if rounds and number % 50 == 0 and time.monotonic() >= deadline:  # every trace gets round 0
                break
            weight = spec["weights"][number]
            context = otel_trace.set_span_in_context(root)
            try:
                with tracer.start_as_current_span("Model.generate", context=context, attributes={
                        "openinference.span.kind": "LLM", "llm.model_name": "scripted-model"}) as span:
                    span.set_attribute("llm.token_count.prompt", weight)
                    span.set_attribute("llm.token_count.completion", 0)
                    span.set_attribute("llm.token_count.total", weight)
                with tracer.start_as_current_span("lookup", context=context, attributes={
                        "openinference.span.kind": "TOOL", "tool.name": "lookup",
                        "input.value": json.dumps({"kwargs": {"q": f"{spec['index']}-{rounds}"}})}) as span:
                    span.set_attribute("output.value", f"r{rounds}")
            except BaseException:  # a trip here would be a leak from another trace
                errors += 1
            row = sent[f"{tid:032x}"]
            row[0] += 1
            row[1] += 1
            row[2] += weight
        rounds += 1
    ran = time.time()
    for root in roots:
        root.end()
    processor.shutdown()
    return {"times": {"go": go_at, "ran": ran, "closed": time.time()}, "sent": sent, "rounds": rounds,
            "errors": errors, "state_errors": processor.stats.state_errors,
            "spans_started": processor.stats.spans_started, "spans_ended": processor.stats.spans_ended}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))), flush=True)
