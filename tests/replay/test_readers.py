"""Readers: every supported format gives the same spans; every kind of bad input becomes a problem naming the
file and line while the rest of the input is still read."""

from __future__ import annotations

import base64
import gzip
import io
import json
from pathlib import Path

import pytest

from spanbreaker.replay import Problem, fields, read_traces, readers

from . import traces as t


def _read(*paths: Path) -> tuple[list[readers.RecordedTrace], list[Problem]]:
    problems: list[Problem] = []
    return list(read_traces(paths, problems.append)), problems


def _shape(trace: readers.RecordedTrace) -> list[tuple[str, int | None, str, int, int, str]]:
    return sorted((f"{s.span_id:016x}", s.parent_id, s.name, s.start_unix_nano, s.end_unix_nano,
                   str(s.attributes.get("openinference.span.kind"))) for s in trace.spans)


def test_otlp_lines_plain_and_gzip_read_the_same(tmp_path: Path) -> None:
    reqs = [t.request(t.looping("a")), t.request(t.healthy("b"))]
    plain, _ = _read(t.write_lines(tmp_path / "x.jsonl", reqs))
    zipped, problems = _read(t.write_lines(tmp_path / "x.bin", reqs, gz=True))  # gzip told by magic, not name
    assert problems == []
    assert [tr.trace_id_hex for tr in plain] == [t._id("a", 16), t._id("b", 16)]
    assert [_shape(tr) for tr in plain] == [_shape(tr) for tr in zipped]
    first = plain[0]
    assert first.resource == {"service.name": "replay-test"}
    assert first.source.endswith("x.jsonl:1")
    tool = next(s for s in first.spans if s.name == "bash")
    assert tool.attributes["tool.name"] == "bash" and tool.scope == t.SCOPE
    llm = next(s for s in first.spans if s.name == "ScriptedModel.generate")
    assert llm.attributes["llm.token_count.prompt"] == 1100


def test_single_pretty_printed_request_and_a_trace_split_over_lines(tmp_path: Path) -> None:
    spans = t.looping("split")
    doc = tmp_path / "one.json"
    doc.write_text(json.dumps(t.request(spans), indent=2))
    whole, problems = _read(doc)
    assert problems == [] and len(whole) == 1 and len(whole[0].spans) == len(spans)
    # the Collector writes batches: children first, the root (which ends last) in the last line
    batches = [t.request(spans[1:20]), t.request(spans[20:]), t.request(spans[:1])]
    split, problems = _read(t.write_lines(tmp_path / "batches.jsonl", batches))
    assert problems == [] and len(split) == 1
    assert _shape(split[0]) == _shape(whole[0])


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_trace_written_root_first_over_many_lines_is_one_trace(tmp_path: Path, jobs: int) -> None:
    """A converter or exporter writing spans as they start (the root first, then its children, one span or a few per
    line) is read as the Collector's batches are: a trace is handed on once a line brings none of its spans, not as
    soon as its root is in (which split it into its root and a fragment per later line, and lost its verdict)."""
    from spanbreaker.replay import replay

    looping, healthy = t.looping("first"), t.healthy("second")
    whole = t.write_lines(tmp_path / "whole.jsonl", [t.request(looping), t.request(healthy)])
    by_span = t.write_lines(tmp_path / "by_span.jsonl", [t.request([span]) for span in looping + healthy])
    split, problems = _read(by_span)
    assert problems == [] and [len(tr.spans) for tr in split] == [len(looping), len(healthy)]
    expected = [(r.trace_id, r.tripped, r.detector, r.step_index) for r in replay([whole])]
    assert expected[0][1] and not expected[1][1]
    assert [(r.trace_id, r.tripped, r.detector, r.step_index) for r in replay([by_span], jobs=jobs)] == expected


def test_jaeger_json_reads_like_otlp(tmp_path: Path) -> None:
    spans = t.looping("jaeger")
    path = tmp_path / "jaeger.json"
    path.write_text(json.dumps(t.to_jaeger(spans)))
    jaeger, problems = _read(path)
    otlp, _ = _read(t.write_lines(tmp_path / "o.jsonl", [t.request(spans)]))
    assert problems == []
    assert jaeger[0].resource == {"service.name": "replay-test"}
    assert _shape(jaeger[0]) == _shape(otlp[0])
    assert jaeger[0].spans[1].scope == t.SCOPE


def test_protobuf_json_base64_ids_are_accepted(tmp_path: Path) -> None:
    spans = t.looping("b64")
    for s in spans:
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in s:
                s[key] = base64.b64encode(bytes.fromhex(s[key])).decode()
    traces, problems = _read(t.write_lines(tmp_path / "b64.jsonl", [t.request(spans)]))
    assert problems == [] and traces[0].trace_id_hex == t._id("b64", 16)


def test_truncated_gzip_names_the_file_and_keeps_what_was_read(tmp_path: Path) -> None:
    reqs = [t.request(t.looping(f"r{i}")) for i in range(4)]
    data = gzip.compress("".join(json.dumps(r) + "\n" for r in reqs).encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: int(len(data) * 0.7)])
    traces, problems = _read(path, t.write_lines(tmp_path / "next.jsonl", [t.request(t.healthy("next"))]))
    assert len(problems) >= 1
    message = str(problems[-1])
    assert "cut.jsonl.gz:" in message and ("truncated" in message or "not JSON" in message)
    assert 1 <= len([tr for tr in traces if tr.source.startswith(str(path))]) < 4
    assert traces[-1].trace_id_hex == t._id("next", 16)  # the next file is still read


@pytest.mark.parametrize("reader", ["in use", "standard library"])
def test_corrupt_gzip_names_the_file_and_keeps_what_was_read(tmp_path: Path, reader: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A deflate stream damaged in the middle (not cut short) is a problem of its file whichever inflate reads it:
    ISA-L's raises an error of its own, not ``zlib.error``."""
    from spanbreaker.replay import gunzip

    if reader == "standard library":
        monkeypatch.setattr(gunzip, "_GzipFile", gzip.GzipFile)
    else:
        assert gunzip.ACCELERATED, "isal is a dependency on this platform: replay should use ISA-L's reader"
    lines = [json.dumps(t.request(t.looping(f"r{i}"))) + "\n" for i in range(40)]
    data = bytearray(gzip.compress("".join(lines).encode(), compresslevel=1, mtime=0))
    middle = len(data) // 2
    data[middle:middle + 64] = b"\xff" * 64
    with gunzip.open_gzip(io.BytesIO(bytes(data))) as damaged, pytest.raises(Exception) as refused:
        damaged.read()
    assert not isinstance(refused.value, (EOFError, OSError))  # inflate refused it, not a checksum at the end
    path = tmp_path / "damaged.jsonl.gz"
    path.write_bytes(bytes(data))
    traces, problems = _read(path, t.write_lines(tmp_path / "next.jsonl", [t.request(t.healthy("next"))]))
    assert [p.path for p in problems] == [str(path)]
    assert "corrupt gzip error" in problems[0].message, problems
    assert 1 <= len([tr for tr in traces if tr.source.startswith(str(path))]) < 40
    assert traces[-1].trace_id_hex == t._id("next", 16)  # the next file is still read


def test_bad_lines_missing_ids_and_huge_attributes_are_reported_by_line(tmp_path: Path) -> None:
    no_ids = t.looping("noids")
    del no_ids[3]["spanId"]
    no_ids[4]["traceId"] = "zz"
    huge = t.healthy("huge")
    huge[3]["attributes"].append(t.attr("output.value", "x" * (fields.MAX_ATTRIBUTE_CHARS + 10)))
    path = t.write_lines(tmp_path / "mixed.jsonl", [
        t.request(t.looping("good")),
        "this is a log line, not JSON",
        json.dumps({"something": "else"}),
        t.request(no_ids),
        t.request(huge),
    ])
    traces, problems = _read(path)
    assert {tr.trace_id_hex for tr in traces} == {t._id(n, 16) for n in ("good", "noids", "huge")}
    by_line = {p.line: str(p) for p in problems}
    assert "not JSON" in by_line[2] and "mixed.jsonl:2" in by_line[2]
    assert "not an OTLP/JSON" in by_line[3]
    line4 = [str(p) for p in problems if p.line == 4]
    assert any("spanId is missing" in m for m in line4) and any("traceId 'zz'" in m for m in line4)
    assert "characters; cut to" in by_line[5]
    noids = next(tr for tr in traces if tr.trace_id_hex == t._id("noids", 16))
    assert len(noids.spans) == len(no_ids) - 2
    cut = next(s for tr in traces for s in tr.spans if len(str(s.attributes.get("output.value", ""))) > 1000)
    assert len(cut.attributes["output.value"]) == fields.MAX_ATTRIBUTE_CHARS


def test_wrong_format_empty_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "list.json").write_text(json.dumps([1, 2, 3], indent=1))
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "broken.json").write_text('{\n  "resourceSpans": [\n    {"resource": \n')
    (tmp_path / "README.md").write_text("not a trace file")  # ignored when a directory is expanded
    traces, problems = _read(tmp_path, tmp_path / "absent.jsonl")
    assert traces == []
    text = "\n".join(str(p) for p in problems)
    assert "list.json:1: wrong format" in text
    assert "empty.json: file is empty" in text
    assert "broken.json:4: truncated JSON" in text
    assert "absent.jsonl: no such file or directory" in text
    assert "README" not in text


def test_progress_reaches_the_total_and_over_long_lines_are_skipped(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    reqs = [t.request(t.looping("p1")), t.request(t.looping("p2"))]
    path = t.write_lines(tmp_path / "p.jsonl.gz", reqs, gz=True)
    seen: list[tuple[int, int]] = []
    traces = list(read_traces([path], lambda p: None, lambda done, total: seen.append((done, total))))
    assert len(traces) == 2 and seen[-1] == (path.stat().st_size, path.stat().st_size)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    # a line longer than the limit is skipped by number; the lines around it are read
    monkeypatch.setattr(readers, "MAX_RECORD_BYTES", len(json.dumps(reqs[0])) + 10)
    long = t.request(t.looping("long", steps=40))
    path = t.write_lines(tmp_path / "long.jsonl", [reqs[0], long, reqs[1]])
    traces, problems = _read(path)
    assert [tr.trace_id_hex for tr in traces] == [t._id("p1", 16), t._id("p2", 16)]
    assert len(problems) == 1 and problems[0].line == 2 and "line longer than" in problems[0].message


def test_jaeger_error_status_events_and_64_bit_trace_ids(tmp_path: Path) -> None:
    doc = t.to_jaeger(t.looping("jerr"))
    span = doc["data"][0]["spans"][2]
    span["tags"].append({"key": "otel.status_code", "type": "string", "value": "ERROR"})
    span["tags"].append({"key": "otel.status_description", "type": "string", "value": "boom"})
    span["logs"] = [{"timestamp": span["startTime"] + 5, "fields": [
        {"key": "event", "type": "string", "value": "exception"},
        {"key": "exception.type", "type": "string", "value": "ValueError"}]}]
    for s in doc["data"][0]["spans"]:
        s["traceID"] = s["traceID"][:16]  # Jaeger's 64-bit ids
    path = tmp_path / "j.json"
    path.write_text(json.dumps(doc))
    (trace,), problems = _read(path)
    assert problems == [] and trace.trace_id == int(t._id("jerr", 16)[:16], 16)
    got = next(s for s in trace.spans if s.span_id == int(span["spanID"], 16))
    assert (got.status_code, got.status_message) == (2, "boom")
    assert got.events[0].name == "exception" and got.events[0].attributes == {"exception.type": "ValueError"}
    assert "otel.status_code" not in got.attributes


def test_a_damaged_first_line_skips_that_line_only(tmp_path: Path) -> None:
    path = t.write_lines(tmp_path / "first.jsonl", ['{"resourceSpans": [ cut off', t.request(t.looping("after"))])
    traces, problems = _read(path)
    assert [tr.trace_id_hex for tr in traces] == [t._id("after", 16)]
    assert [(p.line, p.message.split(" (")[0]) for p in problems] == [(1, "not JSON")]
    assert traces[0].source.endswith("first.jsonl:2")


def test_jaeger_api_v3_and_tempo_wrappers_of_otlp(tmp_path: Path) -> None:
    spans = t.looping("wrapped")
    body = t.request(spans)["resourceSpans"]
    (tmp_path / "v3.json").write_text(json.dumps({"result": {"resourceSpans": body}}))
    (tmp_path / "tempo.json").write_text(json.dumps({"batches": body}))
    traces, problems = _read(tmp_path / "v3.json", tmp_path / "tempo.json")
    assert problems == [] and [len(tr.spans) for tr in traces] == [len(spans), len(spans)]


def test_jaeger_ui_forms_bare_list_and_single_trace(tmp_path: Path) -> None:
    doc = t.to_jaeger(t.looping("ui"))
    (tmp_path / "list.json").write_text(json.dumps(doc["data"], indent=2))
    (tmp_path / "single.json").write_text(json.dumps(doc["data"][0]))
    traces, problems = _read(tmp_path / "list.json", tmp_path / "single.json")
    assert problems == [] and [tr.trace_id_hex for tr in traces] == [t._id("ui", 16)] * 2
    assert traces[0].resource == {"service.name": "replay-test"}
