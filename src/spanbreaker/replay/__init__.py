"""Replay recorded traces through the breaker in observe mode: would it have tripped, where, and what would it
have saved? Used by ``spanbreaker replay``, the tests and the benchmarks.

    from spanbreaker.replay import replay
    for result in replay(["traces.jsonl.gz"]):
        print(result.trace_id, result.tripped, result.detector, result.calls_after_trip)
"""

from __future__ import annotations

from .feed import Feeder
from .readers import Problem, RecordedSpan, RecordedTrace, read_traces
from .runner import StepStat, TraceResult, replay, replay_many, replay_trace

__all__ = [
    "Feeder",
    "Problem",
    "RecordedSpan",
    "RecordedTrace",
    "StepStat",
    "TraceResult",
    "read_traces",
    "replay",
    "replay_many",
    "replay_trace",
]
