"""Replay verdicts: a loop trips and its healthy look-alike stays quiet; a trace recorded live and exported by the
real OTLP encoder replays to the very trip the live processor made; the real SWE-bench runs reproduce the
calibration verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

import spanbreaker
from spanbreaker.replay import Feeder, Problem, replay
from spanbreaker.replay.feed import schedule
from spanbreaker.replay.readers import read_traces

from ..core.spans import Harness, make_harness
from . import traces as t

SLICE = Path(__file__).parent / "data" / "swebench_slice.otlp.jsonl.gz"


def test_loop_trips_and_healthy_look_alike_stays_quiet(tmp_path: Path) -> None:
    path = t.write_lines(tmp_path / "runs.jsonl", [t.request(t.looping("loop")), t.request(t.healthy("fine"))])
    loop, fine = list(replay([path]))
    assert loop.tripped and loop.detector == "tool_repeat"
    assert loop.step == "Step 5" and loop.span_name == "bash"
    # 12 steps recorded; the trip at step 5 would have saved the model and tool calls of steps 6..12
    assert (loop.model_calls_after, loop.tool_calls_after) == (7, 7)
    assert loop.calls_after_trip == 14
    assert loop.steps[loop.step_index or 0].tripped and loop.step_index == 4
    assert loop.tokens_after_trip == sum(s.tokens for s in loop.steps[5:]) > 0
    assert not fine.tripped and fine.detector is None and fine.calls_after_trip == 0
    assert fine.model_calls == 24 and fine.tool_calls == 24 and len(fine.steps) == 24


def test_config_thresholds_apply_and_mode_is_forced_to_observe(tmp_path: Path) -> None:
    path = t.write_lines(tmp_path / "runs.jsonl", [t.request(t.looping("loop"))])
    strict = spanbreaker.BreakerConfig(tool_repeat_max=2, mode="enforce")
    (early,) = replay(str(path), strict)  # one path may be passed bare
    assert early.detector == "tool_repeat" and early.step == "Step 3"
    off = spanbreaker.BreakerConfig(disabled_detectors=frozenset({"tool_repeat", "input_fixation",
                                                                  "low_exploration"}))
    (quiet,) = replay([path], off)
    assert not quiet.tripped


def test_the_verdict_is_the_first_trip_where_the_observed_run_went_on_and_tripped_again(tmp_path: Path) -> None:
    """Replay observes: the recorded run went on after the trip, and after ``half_open_after_s`` of its clock a
    probe can close the breaker, and the next call over the budget trips again. The verdict is the first trip,
    where an enforced run would have stopped, and what it saves counts from there (it reported the last trip,
    saving only what came after that one: a budget trip at model call 301 of a 741-call run read as one at 334)."""
    path = t.write_lines(tmp_path / "runs.jsonl", [t.request(t.healthy("long", steps=6))])
    config = spanbreaker.BreakerConfig(max_model_calls=3, half_open_after_s=0.1)  # a probe a step after each trip
    (verdict,) = replay([path], config)
    assert verdict.detector == "call_budget" and verdict.reason == "4 model calls in this trace, budget 3"
    assert verdict.step == "Step 4" and verdict.step_index == 3
    assert (verdict.model_calls_after, verdict.tool_calls_after) == (8, 9)  # steps 5-12, and step 4's tool call
    feeder = Feeder(config)
    (trace,) = read_traces([path], lambda problem: None)
    feeder.feed(trace)
    first, latest = feeder.engine.first_trip_record(trace.trace_id), feeder.engine.trip_record(trace.trace_id)
    assert first is not None and latest is not None and latest is not first  # it did trip again
    feeder.shutdown()


def _scenario_error_loop(h: Harness) -> None:
    with h.agent():
        for i in range(1, 9):
            h.failed_step(i, "NameError: name 'undefined_helper' is not defined")


def _scenario_tool_loop(h: Harness) -> None:
    with h.agent():
        for i in range(1, 10):
            with h.step(i):
                h.llm(prompt=1000 + 10 * i)
                h.tool("web_search", {"query": "revenue of ACME 2023"}, output="no results")


@pytest.mark.parametrize("scenario", [_scenario_error_loop, _scenario_tool_loop])
def test_replay_of_a_live_recording_gives_the_live_trip(tmp_path: Path, scenario: object) -> None:
    live = make_harness(mode="observe")
    scenario(live)  # type: ignore[operator]
    assert live.trips, "the scenario must trip live"
    record = live.trips[0]
    finished = live.processor.trip_record(record.trace_id)
    assert finished is not None
    # export exactly as an OTLP exporter would (protobuf), then as protobuf-JSON (base64 ids, enum names)
    document = MessageToDict(encode_spans(live.spans()))
    path = tmp_path / "live.json"
    path.write_text(json.dumps(document))
    (result,) = replay([path])
    assert result.trace_id == record.trace_id
    assert (result.detector, result.reason, result.step) == (record.detector, record.reason, record.step)
    assert (result.model_calls_after, result.tool_calls_after) == (
        finished.model_calls_after, finished.tool_calls_after)


def test_recorded_order_ends_before_starts_at_a_tie_and_parents_wrap_children(tmp_path: Path) -> None:
    path = t.write_lines(tmp_path / "one.jsonl", [t.request(t.agent_trace("order", [("ls", "a"), ("ls", "b")]))])
    (trace,) = read_traces([path], lambda p: None)
    order = [(("start" if start else "end"), span.name) for _, start, span in schedule(trace.spans)]
    assert order[:6] == [("start", "CodeAgent.run"), ("start", "Step 1"), ("start", "ScriptedModel.generate"),
                         ("end", "ScriptedModel.generate"), ("start", "bash"), ("end", "bash")]
    assert order[-1] == ("end", "CodeAgent.run")


def test_swebench_slice_reproduces_the_calibration_verdicts() -> None:
    """Four real runs from the shared SWE-bench file: the two unresolved runs the defaults trip, two resolved
    runs that must stay quiet (the full file is replayed by benchmarks/detection_swebench.py)."""
    problems: list[Problem] = []
    feeder = Feeder(spanbreaker.BreakerConfig())
    results = {r.resource["swebench.instance_id"]: r for r in replay([SLICE], problems=problems, feeder=feeder)}
    assert problems == []
    assert feeder.stats.spans == sum(r.spans for r in results.values())
    assert feeder.engine.stats.internal_errors == 0
    verdicts = {k: (r.resource["swebench.resolved"], r.detector) for k, r in results.items()}
    assert verdicts == {
        "astropy__astropy-12907": (True, None),
        "django__django-11099": (True, None),
        "pylint-dev__pylint-8898": (False, "input_fixation"),
        "scikit-learn__scikit-learn-25102": (False, "context_growth"),
    }
    pylint = results["pylint-dev__pylint-8898"]
    assert pylint.step == "Step 49" and (pylint.model_calls_after, pylint.tool_calls_after) == (6, 5)


def test_coarse_clocks_keep_nesting(tmp_path: Path) -> None:
    """Every span at one timestamp (a recorder without clocks): parents still open before and close after
    their children, so the processor sees one trace and the loop still trips."""
    spans = t.looping("flat")
    for s in spans:
        s["startTimeUnixNano"] = s["endTimeUnixNano"] = str(t.T0)
    path = t.write_lines(tmp_path / "flat.jsonl", [t.request(spans)])
    (trace,) = read_traces([path], lambda p: None)
    order = schedule(trace.spans)
    opened: set[int] = set()
    for _, start, span in order:
        if start:
            assert span.parent_id is None or span.parent_id in opened, span.name
            opened.add(span.span_id)
        else:
            assert not any(s.parent_id == span.span_id and s.span_id in opened for s in trace.spans), span.name
            opened.discard(span.span_id)
    (result,) = replay([path])
    assert result.tripped and result.detector == "tool_repeat"
