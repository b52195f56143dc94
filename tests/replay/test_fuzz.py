"""Whatever a trace file holds, reading and replaying it never raises: a defect is a Problem, the rest goes on."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spanbreaker.replay import Problem, replay

from . import traces as t

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)
_FIELDS = ["traceId", "spanId", "parentSpanId", "name", "kind", "startTimeUnixNano", "endTimeUnixNano",
           "attributes", "events", "status"]


@st.composite
def damaged_request(draw: st.DrawFn) -> dict[str, Any]:
    """A real request with some span fields replaced by arbitrary JSON."""
    spans = t.looping("fuzz", steps=3)
    for _ in range(draw(st.integers(1, 6))):
        span = spans[draw(st.integers(0, len(spans) - 1))]
        span[draw(st.sampled_from(_FIELDS))] = draw(_json)
    return t.request(spans)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_request(), st.sampled_from(["lines", "document", "jaeger-ish", "garbage"]), st.binary(max_size=64))
def test_damaged_input_never_raises(request: dict[str, Any], form: str, noise: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.json"
        if form == "lines":
            path.write_text(json.dumps(request) + "\n" + noise.decode("latin-1") + "\n")
        elif form == "document":
            path.write_text(json.dumps(request, indent=1))
        elif form == "jaeger-ish":
            path.write_text(json.dumps({"data": [{"spans": request["resourceSpans"][0]["scopeSpans"][0]["spans"]}]}))
        else:
            path.write_bytes(b"\x1f\x8b" + noise)
        problems: list[Problem] = []
        results = list(replay([path], problems=problems))
        assert all(r.trace_id for r in results)
        assert all(isinstance(p, Problem) and str(p).startswith(str(path)) for p in problems)
