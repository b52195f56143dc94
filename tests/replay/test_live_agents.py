"""Replay equals live on real framework spans: a real smolagents agent (the scripted model is the only stub)
runs under the real OpenInference instrumentor with spanbreaker in observe mode; its spans, exported through
the real OTLP encoder, replay to the same verdict, at the same step, with the same calls after the trip."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from smolagents import ToolCallingAgent, tool
from smolagents.monitoring import LogLevel

import spanbreaker
from spanbreaker.instrumentation import uninstrument
from spanbreaker.replay import replay

from ..smolagents.scripted import ScriptedModel, call, final_call


@tool
def kb_search(query: str) -> str:
    """Searches the knowledge base; it only ever knows one article.

    Args:
        query: what to look for
    """
    return "Article 1142: span processors receive on_start and on_end for every span."


@tool
def list_issues(page: int) -> str:
    """Lists issues, one page at a time.

    Args:
        page: page number, from 1
    """
    return "\n".join(f"issue #{page * 10 + i}: crash parsing header variant {page}-{i}" for i in range(10))


@pytest.fixture
def recorded(tmp_path: Path) -> Iterator[Any]:
    providers: list[TracerProvider] = []

    def run(script: list[Any]) -> tuple[spanbreaker.BreakerSpanProcessor, Path]:
        exporter = InMemorySpanExporter()
        provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        providers.append(provider)
        processor = spanbreaker.instrument(tracer_provider=provider, config=spanbreaker.BreakerConfig(mode="observe"),
                                           frameworks=["smolagents"])
        assert processor is not None
        agent = ToolCallingAgent(tools=[kb_search, list_issues], model=ScriptedModel(script), max_steps=12,
                                 verbosity_level=LogLevel.OFF)
        agent.run("Find how span processors are called.")
        path = tmp_path / f"run{len(providers)}.json"
        path.write_text(json.dumps(MessageToDict(encode_spans(exporter.get_finished_spans()))))
        uninstrument()
        return processor, path

    yield run
    uninstrument()
    for provider in providers:
        provider.shutdown()


def test_real_agent_loop_replays_to_the_live_trip(recorded: Any) -> None:
    processor, path = recorded([call("kb_search", {"query": "span processor callbacks"})] * 11 + [final_call()])
    (result,) = replay([path])
    live = processor.trip_record(result.trace_id)
    assert live is not None and result.tripped
    assert (result.detector, result.reason, result.step, result.span_name) == (
        live.detector, live.reason, live.step, live.span_name)
    assert (result.model_calls_after, result.tool_calls_after) == (live.model_calls_after, live.tool_calls_after)
    assert result.detector == "tool_repeat" and result.calls_after_trip > 0


def test_real_agent_paging_stays_quiet_live_and_replayed(recorded: Any) -> None:
    script = [call("list_issues", {"page": page}) for page in range(1, 11)] + [final_call()]
    processor, path = recorded(script)
    (result,) = replay([path])
    assert processor.trip_record(result.trace_id) is None
    assert not result.tripped and result.tool_calls >= 10
