"""The processor's own OTel metrics, recorded into a real SDK MeterProvider by a real smolagents run.

Why: dashboards and alerts count trips from these counters, not from sampled traces; they must carry the
detector and agent labels, and must cost nothing (and never raise) when the application has no MeterProvider.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

import spanbreaker
from spanbreaker import marking
from spanbreaker.adapters import smolagents as smolagents_adapter
from spanbreaker.metrics import AGENT_LABEL, DETECTOR_LABEL, KIND_LABEL, BreakerMetrics

from .agent import TASK, build_agent


@pytest.fixture
def metered() -> Iterator[tuple[InMemoryMetricReader, spanbreaker.BreakerSpanProcessor]]:
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    provider = TracerProvider()
    processor = spanbreaker.BreakerSpanProcessor(spanbreaker.BreakerConfig(), meter_provider=meter_provider)
    provider.add_span_processor(processor)
    smolagents_adapter.instrument(provider, processor)
    try:
        yield reader, processor
    finally:
        smolagents_adapter.uninstrument()
        provider.shutdown()
        meter_provider.shutdown()


def points(reader: InMemoryMetricReader) -> dict[str, list[tuple[dict[str, Any], int]]]:
    """metric name -> [(attributes, cumulative value)] from the reader's last collection."""
    found: dict[str, list[tuple[dict[str, Any], int]]] = {}
    data = reader.get_metrics_data()
    if data is None:
        return found
    for resource_metrics in data.resource_metrics:
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                for point in metric.data.data_points:
                    found.setdefault(metric.name, []).append((dict(point.attributes or {}), int(point.value)))
    return found


def test_a_trip_counts_once_by_detector_and_agent_and_the_vetoed_call_by_kind(metered: Any) -> None:
    reader, processor = metered
    agent, tool, _ = build_agent()
    with pytest.raises(spanbreaker.Tripped):
        agent.run(TASK)
    assert processor.stats.trips == 1, "the trip came from this processor"
    got = points(reader)
    assert marking.METRIC_TRIPS in got, (got, processor.stats)
    assert got[marking.METRIC_TRIPS] == [({DETECTOR_LABEL: "tool_repeat", AGENT_LABEL: "ToolCallingAgent"}, 1)]
    assert got[marking.METRIC_BLOCKED] == [({DETECTOR_LABEL: "tool_repeat", KIND_LABEL: "TOOL"}, 1)]
    assert [attrs for attrs, _ in got[marking.METRIC_WARNINGS]] == [{DETECTOR_LABEL: "tool_repeat"}]
    assert marking.METRIC_INTERNAL_ERRORS not in got
    assert tool.calls == 4  # the fifth identical search was vetoed before it ran


def test_a_steer_counts_apart_from_the_trip_that_follows_it() -> None:
    """``response="steer"``: the first finding fails one call with a message (a steer, counted once); the model
    here ignores it and repeats, so the hard trip follows and is counted as a trip, not as a second steer."""
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    provider = TracerProvider()
    processor = spanbreaker.BreakerSpanProcessor(spanbreaker.BreakerConfig(response="steer"),
                                                 meter_provider=meter_provider)
    provider.add_span_processor(processor)
    smolagents_adapter.instrument(provider, processor)
    try:
        agent, _, _ = build_agent()
        with pytest.raises(spanbreaker.Tripped):
            agent.run(TASK)
        got = points(reader)
    finally:
        smolagents_adapter.uninstrument()
        provider.shutdown()
        meter_provider.shutdown()
    assert processor.stats.steered == 1, processor.stats
    assert got[marking.METRIC_STEERS] == [({DETECTOR_LABEL: "tool_repeat", AGENT_LABEL: "ToolCallingAgent"}, 1)]
    assert got[marking.METRIC_TRIPS] == [({DETECTOR_LABEL: "tool_repeat", AGENT_LABEL: "ToolCallingAgent"}, 1)]


def test_a_healthy_run_records_no_trip_and_no_block(metered: Any) -> None:
    reader, processor = metered
    agent, _, _ = build_agent(healthy=True)
    assert agent.run(TASK) == "412 million"
    got = points(reader)
    assert marking.METRIC_TRIPS not in got
    assert marking.METRIC_BLOCKED not in got
    assert processor.stats.trips == 0


def test_without_an_sdk_meter_provider_the_counters_are_no_ops() -> None:
    """The global MeterProvider of this test process is the API's proxy: nothing is recorded, nothing raises."""
    metrics = BreakerMetrics()
    metrics.trip("tool_repeat", None)
    metrics.blocked("tool_repeat", "TOOL")
    metrics.steer("tool_repeat", "agent")
    metrics.warning("token_budget")
    metrics.internal_error()
