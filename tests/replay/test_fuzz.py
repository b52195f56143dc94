"""Whatever a trace file holds, reading and replaying it never raises: a defect is a Problem, the rest goes on.

Property-based (hypothesis): arbitrary bytes, arbitrary JSON, nesting past the parser, numbers past every wire type,
and valid records with bytes flipped, cut or inserted, as lines of a line-per-request file (plain and gzip), as its
damaged start, and as whole documents; through the readers, the feed and the processor (``replay``), and through
the command. The only outcomes allowed are traces and ``file:line: message`` problems; the lines around the damage
are still read; the command exits 0 or 1 and writes its report. Examples are bounded so the suite stays fast.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spanbreaker.cli import main
from spanbreaker.replay import Problem, otlp_json, readers, recorded, replay
from spanbreaker.replay.shard import Shard

from . import traces as t
from . import verdicts

WHO_AND_WHEN = verdicts.COMMITTED[0]

FAST = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "40")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
"""``FUZZ_EXAMPLES=3000`` for a long run by hand."""

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.integers(min_value=10**300, max_value=10**400)
    | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)
_FIELDS = ["traceId", "spanId", "parentSpanId", "name", "kind", "startTimeUnixNano", "endTimeUnixNano",
           "attributes", "events", "status"]
_READ_KEYS = ["openinference.span.kind", "llm.token_count.total", "llm.token_count.prompt", "llm.cost.total",
              "gen_ai.usage.input_tokens", "tool.name", "input.value", "output.value", "llm.model_name"]
"""Attributes the processor reads: a value of any type there reaches its detectors through the feed."""
_ANY_VALUE = st.one_of(
    _json.map(lambda v: {"stringValue": v}), _json.map(lambda v: {"intValue": v}),
    _json.map(lambda v: {"doubleValue": v}), _json.map(lambda v: {"boolValue": v}),
    st.floats(allow_nan=True).map(lambda v: {"doubleValue": v}), st.sampled_from(["AGENT", "LLM", "TOOL", "CHAIN"])
    .map(lambda v: {"stringValue": v}), _json.map(lambda v: {"arrayValue": {"values": v}}),
    _json.map(lambda v: {"kvlistValue": {"values": v}}), _json)

BEFORE = json.dumps(t.request(t.looping("before")))
AFTER = json.dumps(t.request(t.healthy("after")))
AROUND = {t._id("before", 16), t._id("after", 16)}


@st.composite
def damaged_request(draw: st.DrawFn) -> dict[str, Any]:
    """A real request with some span fields replaced by arbitrary JSON and some attributes the processor reads
    given values of arbitrary type."""
    spans = t.looping("fuzz", steps=3)
    for _ in range(draw(st.integers(1, 6))):
        span = spans[draw(st.integers(0, len(spans) - 1))]
        if draw(st.booleans()) or not isinstance(span.get("attributes"), list):
            span[draw(st.sampled_from(_FIELDS))] = draw(_json)
        else:
            span["attributes"].append({"key": draw(st.sampled_from(_READ_KEYS)), "value": draw(_ANY_VALUE)})
    return t.request(spans)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid request line with bytes flipped, deleted, inserted or the end cut off."""
    data = bytearray(json.dumps(draw(damaged_request())).encode())
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data) - 1))
        op = draw(st.sampled_from(["flip", "delete", "insert", "cut"]))
        if op == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "delete":
            del data[at:at + draw(st.integers(1, 64))]
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        else:
            del data[at:]
        if not data:
            break
    return bytes(data)


_line = st.one_of(
    st.binary(max_size=200),
    _json.map(lambda v: json.dumps(v).encode()),
    damaged_request().map(lambda r: json.dumps(r).encode()),
    mutated(),
    st.integers(900, 5000).map(lambda n: b"[" * n + b"]" * n),  # around the parser's recursion limit
    st.integers(900, 5000).map(lambda n: b'{"resourceSpans":' * n),
    st.integers(4000, 6000).map(lambda n: b'{"resourceSpans": [], "n": ' + b"9" * n + b"}"),  # digit limit
    st.sampled_from([b"1e400", b"-1e400", b"NaN", b"Infinity", b"\x00" * 10]),
    st.just(b"\xef\xbb\xbf").map(lambda bom: bom + BEFORE.encode()),  # a byte-order mark before a request
)


def _checked(path: Path) -> list[str]:
    """Replay ``path``; every problem must name the file (and a line where one is known). The trace ids read."""
    problems: list[Problem] = []
    ids = [r.trace_id for r in replay([path], problems=problems)]
    form = re.compile(rf"^{re.escape(str(path))}(:\d+)?: \S")
    assert all(isinstance(p, Problem) and p.path == str(path) and form.match(str(p)) for p in problems), problems
    return ids


@FAST
@given(st.lists(_line, min_size=1, max_size=5), st.booleans())
def test_damaged_lines_are_problems_and_the_lines_around_them_are_read(lines: list[bytes], gz: bool) -> None:
    data = b"\n".join([BEFORE.encode(), *lines, AFTER.encode()]) + b"\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.jsonl"
        path.write_bytes(gzip.compress(data) if gz else data)
        assert set(_checked(path)) >= AROUND


@FAST
@given(st.lists(_line, min_size=1, max_size=3))
def test_a_damaged_start_does_not_lose_the_request_lines_after_it(lines: list[bytes]) -> None:
    data = b"\n".join([*lines, BEFORE.encode(), AFTER.encode()]) + b"\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.jsonl"
        path.write_bytes(b" " + data)  # never the gzip magic number
        assert set(_checked(path)) >= AROUND


@FAST
@given(damaged_request(), st.sampled_from(["lines", "document", "jaeger-ish", "garbage"]), st.binary(max_size=64),
       _json)
def test_damaged_documents_never_raise(request: dict[str, Any], form: str, noise: bytes, value: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.json"
        if form == "lines":
            path.write_text(json.dumps(request) + "\n" + noise.decode("latin-1") + "\n")
        elif form == "document":
            path.write_text(json.dumps(request, indent=1))
        elif form == "jaeger-ish":
            spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
            path.write_text(json.dumps({"data": [{"spans": spans, "processes": value}, value]}))
        else:
            path.write_bytes(b"\x1f\x8b" + noise)
        results = _checked(path)
        assert all(results)


@FAST
@given(_json, st.sampled_from(["bare", "data", "resourceSpans", "spans", "scopeSpans"]), st.booleans())
def test_any_json_document_never_raises(value: Any, where: str, pretty: bool) -> None:
    document = {"bare": value, "data": {"data": value}, "resourceSpans": {"resourceSpans": value},
                "spans": {"data": [{"spans": value}]},
                "scopeSpans": {"resourceSpans": [{"scopeSpans": value}]}}[where]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.json"
        path.write_text(json.dumps(document, indent=1 if pretty else None))
        _checked(path)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, min_size=0, max_size=3))
def test_the_command_exits_0_or_1_and_writes_its_report(lines: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path, page = Path(tmp) / "in.jsonl", Path(tmp) / "report.html"
        path.write_bytes(b"\n".join([BEFORE.encode(), *lines, AFTER.encode()]) + b"\n")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["replay", str(path), "--json", "--html", str(page), "--no-progress"])
        problems = [line for line in err.getvalue().splitlines() if line.startswith("spanbreaker replay: ")]
        assert status == (1 if problems else 0), err.getvalue()
        assert all(line.startswith(f"spanbreaker replay: {path}") for line in problems)
        assert {json.loads(line)["trace_id"] for line in out.getvalue().splitlines()} >= AROUND
        assert page.stat().st_size > 0


def _read_both(data: bytes, shard: Shard | None) -> tuple[Any, Any]:
    """(spans and problems of the line read with the typed decoder allowed, the same with only the general reader)."""
    def read() -> Any:
        grouper = readers._Grouper("x.jsonl", problems.append, shard)
        readers._add_line(grouper, data, "x.jsonl", 1, problems.append, shard)
        return [(t.trace_id, t.resource, t.spans, [recorded.start_attributes(s) for s in t.spans])
                for t in grouper.rest()], problems

    problems: list[Problem] = []
    typed = read()
    problems = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(readers, "typed_spans", lambda data, shard: None)
        general = read()
    return typed, general


_EDGE_VALUES = st.sampled_from([
    None, "", "0", "00000000000000000000000000000000", "0x1f", " 1f", "1f ", "\uff11\uff12", "+5", "1_0", "-1", 2**64,
    2**64 - 1, 2**63, -(2**63) - 1, "18446744073709551616", "18446744073709551615", 1.5, True, [], {}, "NaN",
    {"name": None}, {"name": 5}, {"code": "STATUS_CODE_ERROR", "message": None}, [{"name": None}],
    [{"timeUnixNano": None}], [{"attributes": None}], "a" * 40])


@FAST
@given(damaged_request(), st.lists(st.tuples(st.sampled_from([*_FIELDS, "scope", "spans", "resource", "result",
                                                              "instrumentationLibrary"]),
                                             _EDGE_VALUES | _json), max_size=3),
       st.sampled_from([None, Shard(0, 2), Shard(1, 2)]))
def test_the_typed_decoder_reads_every_line_as_the_general_reader_does(
        request: dict[str, Any], edits: list[tuple[str, Any]], shard: Shard | None) -> None:
    """The typed decoder (msgspec, replay/otlp_typed.py) only ever speeds a line up: on real requests damaged in
    their fields, their attribute values, their scope and resource, it gives the spans and problems the general
    reader gives, or defers to it."""
    scope_spans = request["resourceSpans"][0]["scopeSpans"][0]
    for field, value in edits:
        if field in ("scope", "spans", "instrumentationLibrary"):
            scope_spans[field] = value
        elif field == "resource":
            request["resourceSpans"][0]["resource"] = value
        elif field == "result":
            request["result"] = value
        elif isinstance(scope_spans.get("spans"), list) and scope_spans["spans"] and isinstance(
                scope_spans["spans"][0], dict):
            scope_spans["spans"][0][field] = value
    data = json.dumps(request).encode()
    typed, general = _read_both(data, shard)
    assert typed == general


def test_the_typed_decoder_takes_the_committed_corpora_whole() -> None:
    """Every line of a real corpus is well formed: the typed decoder reads all of it (none deferred)."""
    with gzip.open(WHO_AND_WHEN, "rb") as corpus:
        lines = corpus.read().splitlines()
    assert lines and all(otlp_json.typed_spans(line, None) is not None for line in lines)
