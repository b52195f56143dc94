"""Replay recorded traces through the breaker in observe mode: would it have tripped, where, and what would it
have saved? Used by ``spanbreaker replay``, the tests and the benchmarks.

    from spanbreaker.replay import replay
    for result in replay(["traces.jsonl.gz"]):
        print(result.trace_id, result.tripped, result.detector, result.calls_after_trip)

    replay(paths, jobs=2)                       # worker processes (spawned: guard a script's main)
    replay(paths, shard=Shard.parse("3/8"))     # this machine's share of an archive
"""

from __future__ import annotations

from .feed import Feeder
from .readers import read_traces
from .recorded import Problem, RecordedSpan, RecordedTrace
from .runner import StepStat, TraceResult, replay, replay_many, replay_trace
from .shard import Shard

__all__ = [
    "Feeder",
    "Problem",
    "RecordedSpan",
    "RecordedTrace",
    "Shard",
    "StepStat",
    "TraceResult",
    "read_traces",
    "replay",
    "replay_many",
    "replay_trace",
]
