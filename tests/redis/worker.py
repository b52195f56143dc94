"""One process of a multi-process trace: a real smolagents ToolCallingAgent with a scripted model.

Run as ``python worker.py '<json spec>'``; prints one JSON line with what happened. The trace id comes from a
W3C ``traceparent`` (as an HTTP call between services would carry it), so every worker given the same header
adds to the same trace. The model is the only stub: real agent, real OpenInference instrumentor, real SDK.
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

import smolagents
from openinference.instrumentation.smolagents import SmolagentsInstrumentor
from opentelemetry import context as otel_context
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from smolagents import ChatMessage, MessageRole, Model, TokenUsage, ToolCallingAgent, tool
from smolagents.models import ChatMessageToolCall, ChatMessageToolCallFunction

import spanbreaker
from spanbreaker.state import ChainPropagator

PROPAGATOR = CompositePropagator([TraceContextTextMapPropagator(), ChainPropagator()])
"""What an HTTP client and server instrumentation would inject and extract on each side of a call."""


def _wait_for(path: Path, timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _hold(path: Path, processor: spanbreaker.BreakerSpanProcessor) -> None:
    """Wait inside a tool until the test says go on (it changed something outside), then until this process has
    flushed to the shared state since: the rest of the run happens after that change, however fast or slow the
    machine is. Both waits are bounded; a test that never signals fails on its own assertions."""
    _wait_for(path, 30.0)
    if processor.shared is not None:
        processor.shared.flush(10.0)


def call_remote(request: Path, response: Path, task: str) -> str:
    """A request to another service: the current context goes in the headers, the answer comes back."""
    carrier: dict[str, str] = {}
    PROPAGATOR.inject(carrier)
    request.with_suffix(".tmp").write_text(json.dumps({"headers": carrier, "task": task}))
    request.with_suffix(".tmp").rename(request)
    return response.read_text() if _wait_for(response, 20.0) else "no answer"


class ScriptedModel(Model):
    """Asks for ``lookup`` ``steps`` times (new topics when healthy, one topic when looping, or always ``query``),
    then answers; ``think`` seconds per call stand for the model's latency."""

    def __init__(self, steps: int, loop: bool, query: str | None = None, think: float = 0.0, **kwargs: Any) -> None:
        super().__init__(model_id="scripted-model", **kwargs)
        self.steps, self.loop, self.query, self.think, self.calls = steps, loop, query, think, 0

    def generate(self, messages: Any, stop_sequences: Any = None, response_format: Any = None,
                 tools_to_call_from: Any = None, **kwargs: Any) -> ChatMessage:
        i = self.calls
        self.calls += 1
        time.sleep(self.think)
        if i >= self.steps:
            name, args = "final_answer", {"answer": f"done after {i} lookups"}
        else:
            name, args = "lookup", {"query": self.query or ("the same page" if self.loop else f"topic number {i}")}
        call = ChatMessageToolCall(id=f"call_{i}", type="function",
                                   function=ChatMessageToolCallFunction(name=name, arguments=args))
        return ChatMessage(role=MessageRole.ASSISTANT, content=None, tool_calls=[call],
                           token_usage=TokenUsage(input_tokens=200 + i, output_tokens=20 + i))


class _Count(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def main(spec: dict[str, Any]) -> dict[str, Any]:
    warnings = _Count()
    logging.getLogger("spanbreaker.state").addHandler(warnings)
    runs = {"tool": 0}
    gaps = {"last": 0.0, "max": 0.0}
    delay = float(spec.get("delay", 0.0))
    loop = bool(spec.get("loop", False))

    @tool
    def lookup(query: str) -> str:
        """Look a topic up.

        Args:
            query: what to look up.
        """
        runs["tool"] += 1
        if spec.get("call"):
            return call_remote(Path(spec["call"]["request"]), Path(spec["call"]["response"]), query)
        now = time.monotonic()
        if gaps["last"]:
            gaps["max"] = max(gaps["max"], now - gaps["last"])
        if runs["tool"] == int(spec.get("mark", {}).get("step", -1)):
            Path(spec["mark"]["path"]).touch()  # tells the test this run is under way (it acts on it)
        time.sleep(delay)
        if runs["tool"] == int(spec.get("hold", {}).get("step", -1)):
            _hold(Path(spec["hold"]["path"]), processor)
        gaps["last"] = time.monotonic()  # the gap to the next tool is the agent's own time: model, spans, breaker
        return "nothing new on that" if loop else f"facts about {query}: {runs['tool'] * 7919}"

    smolagents.ScriptedModel = ScriptedModel  # type: ignore[attr-defined]  # the instrumentor wraps exported models
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=4096))  # agent spans carry many
    config = spanbreaker.BreakerConfig(state=spec["state"], state_prefix=spec["prefix"],
                                       state_staleness_s=spec.get("staleness", 0.05), **spec.get("config", {}))
    processor = spanbreaker.BreakerSpanProcessor(config)
    provider.add_span_processor(processor)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    model = ScriptedModel(int(spec.get("steps", 5)), loop, spec.get("query"), float(spec.get("think", 0.0)))
    agent = ToolCallingAgent(tools=[lookup], model=model, max_steps=int(spec.get("steps", 5)) + 3,
                             name=spec.get("name", "worker"), verbosity_level=0)
    if spec.get("ready"):
        Path(spec["ready"]).touch()
    if spec.get("go"):
        deadline = time.monotonic() + 30
        while not Path(spec["go"]).exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    if spec.get("serve"):  # a service: wait for the request and continue its trace (and delegation path)
        request = Path(spec["serve"]["request"])
        if not _wait_for(request):
            return {"error": "no request came"}
        parent = PROPAGATOR.extract(json.loads(request.read_text())["headers"])
        spec["traceparent"] = json.loads(request.read_text())["headers"]["traceparent"]
    else:
        parent = PROPAGATOR.extract({"traceparent": spec["traceparent"]})
    result: dict[str, Any] = {"tripped": False, "error": None}
    started = time.monotonic()

    def run() -> None:
        token = otel_context.attach(parent)
        try:
            agent.run("find out everything about the topic")
        except spanbreaker.Tripped as trip:
            result.update(tripped=True, detector=trip.detector, reason=trip.reason, evidence=trip.evidence)
        except Exception as exc:  # anything else reaching the app is a defect the test reports
            result["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            otel_context.detach(token)

    contextvars.copy_context().run(run)  # smolagents leaks its span context when run() raises
    if spec.get("serve"):
        answer = f"stopped: {result.get('detector')}" if result["tripped"] else "done"
        Path(spec["serve"]["response"]).write_text(answer)
    trace_id = int(spec["traceparent"].split("-")[1], 16)
    result["leaked_spans_ended"] = processor.end_open_spans(trace_id, "run aborted")
    result["seconds"] = round(time.monotonic() - started, 3)
    processor.shutdown()  # flushes what this process spent to the shared state
    instrumentor.uninstrument()
    spans = exporter.get_finished_spans()
    record = processor.trip_record(trace_id)
    result.update(
        model_calls=model.calls, tool_runs=runs["tool"], spans_started=processor.stats.spans_started,
        exported=len(spans), marked=sum(1 for s in spans if (s.attributes or {}).get("spanbreaker.tripped")),
        trace_ids=sorted({f"{s.context.trace_id:032x}" for s in spans}),
        record_detector=record.detector if record else None, state_errors=processor.stats.state_errors,
        state_warnings=warnings.count, max_gap_between_tools=round(gaps["max"], 3),
    )
    return result


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1])), default=str), flush=True)
