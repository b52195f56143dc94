"""The same runs recorded in another instrumentor's shape get the same verdicts (``benchmarks/shape_ablation.py``).

The corpora were all converted into one shape (OpenInference attributes, a ``Step N`` span per model turn, clock
times, results up to 8 KiB, failures as text). The OpenAI Agents SDK and pydantic-ai record no step span;
GenAI-convention instrumentors (AutoGen's own, openai-v2, pydantic-ai) name everything ``gen_ai.*`` and put a
model's output text inside ``gen_ai.output.messages``; a log converted without clocks has no times; others keep
less of a result, or record a failed call as a raised exception. A detector that works only in our converters'
shape would be tuned to them, not to the runs: here each committed corpus is rewritten into those shapes and
replayed at the defaults, and every trace must get the verdict it gets as converted (the same trips, by the same
detectors), but where :data:`KNOWN_DIFFERENCES` names the shape's own verdict and why. Without token counts
(``no_tokens``) the corpora keep no prompt text to measure, so that shape is left to the benchmark.
"""

from __future__ import annotations

import functools
import gzip
import json
import sys
from pathlib import Path

import pytest

from spanbreaker.replay import replay

from .verdicts import COMMITTED

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from shape_ablation import VARIANTS, rewrite


@functools.cache
def _verdicts(path: Path) -> list[tuple[str, str | None]]:
    return [(result.trace_id, result.detector if result.tripped else None) for result in replay(path)]


KNOWN_DIFFERENCES = {
    ("short_results", "9b1228b457eaa0c5fdd68548015fb310"): "tool_repeat",
}
"""(shape, trace id) -> the verdict that trace gets in that shape, where it differs from the trace as converted, and
why it must: SteP scrolling through a long WebArena page (``webarena/306``, 16 scrolls, every page after one new)
is paging as converted, but the pages share their first 1,000 characters (the site's header and navigation), so an
instrumentor that keeps only that much of a result records the same call with the same result, five times: a
repeat on what it recorded. BENCHMARKS.md, "Other instrumentors' shapes"."""


@pytest.mark.parametrize("variant", ["no_steps", "genai", "no_times", "short_results", "structured_errors",
                                     "tools_under_llm"])
@pytest.mark.parametrize("corpus", COMMITTED, ids=lambda path: path.name.split(".")[0])
def test_another_instrumentors_shape_gets_the_same_verdicts(corpus: Path, variant: str, tmp_path: Path) -> None:
    reshaped = tmp_path / f"{variant}.jsonl.gz"
    rewrite(corpus, reshaped, VARIANTS[variant])
    as_converted = _verdicts(corpus)
    assert any(detector for _, detector in as_converted)  # a corpus that trips somewhere: verdicts to keep
    expected = [(trace_id, KNOWN_DIFFERENCES.get((variant, trace_id), detector)) for trace_id, detector in as_converted]
    assert _verdicts(reshaped) == expected


@pytest.mark.parametrize("variant", ["no_tokens", "no_llm"])
@pytest.mark.parametrize("corpus", COMMITTED, ids=lambda path: path.name.split(".")[0])
def test_a_shape_that_records_less_trips_no_trace_it_did_not(corpus: Path, variant: str, tmp_path: Path) -> None:
    """Without token counts, or without model call spans at all, what reads the prompt or the model's output
    (``context_growth``, ``self_reported_stall``) has less to go on; nothing may trip that did not before (once,
    with no model call spans, every identical call of a turn counted alone: 172 of vorflux's 442 successful runs
    tripped)."""
    reshaped = tmp_path / f"{variant}.jsonl.gz"
    rewrite(corpus, reshaped, VARIANTS[variant])
    as_converted = dict(_verdicts(corpus))
    reshaped_verdicts = _verdicts(reshaped)
    assert len(reshaped_verdicts) == len(as_converted)  # every trace replayed, none lost to the rewrite
    for trace_id, detector in reshaped_verdicts:
        assert detector is None or as_converted[trace_id] == detector, trace_id


@pytest.mark.parametrize("corpus", COMMITTED, ids=lambda path: path.name.split(".")[0])
def test_the_converters_nest_a_childs_time_in_its_parents(corpus: Path) -> None:
    """A child that outlives its parent span loses its agent in a replay (its parent is no longer open): the
    Who&When converter once let later orchestrator turns and code runs fall after their step's end."""
    with gzip.open(corpus, "rt", encoding="utf-8") as lines:
        for line in lines:
            spans = [span for resource in json.loads(line)["resourceSpans"] for scope in resource["scopeSpans"]
                     for span in scope["spans"]]
            by_id = {span["spanId"]: span for span in spans}
            for span in spans:
                parent = by_id.get(span.get("parentSpanId"))
                if parent is not None:
                    assert int(parent["startTimeUnixNano"]) <= int(span["startTimeUnixNano"])
                    assert int(span["endTimeUnixNano"]) <= int(parent["endTimeUnixNano"]), span["name"]
