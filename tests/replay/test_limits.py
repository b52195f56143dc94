"""Input at the limits: nesting beyond the JSON parser, numbers beyond their wire type, records beyond the byte cap.

Each used to end replay with a traceback (or read the whole file as one document and skip it); each is now one
``file:line: message`` and the rest of the input is read. The memory test runs the reader in a subprocess under an
address-space limit, so a reader that holds more than its cap fails there with ``MemoryError``.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from spanbreaker.replay import Problem, readers, replay

from . import traces as t


def _replay(*paths: Path) -> tuple[list[str], list[Problem]]:
    problems: list[Problem] = []
    return [r.trace_id for r in replay(list(paths), problems=problems)], problems


def test_nesting_beyond_the_json_parser_skips_that_line_only(tmp_path: Path) -> None:
    deep = "[" * 100_000
    lines = t.write_lines(tmp_path / "deep.jsonl",
                          [t.request(t.looping("before")), deep, t.request(t.healthy("after"))])
    first = t.write_lines(tmp_path / "first.jsonl", ['{"a":' * 100_000, t.request(t.looping("then"))])
    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps({"data": []})[:-2] + deep + "]}")
    ids, problems = _replay(lines, first, whole)
    assert ids == [t._id(n, 16) for n in ("before", "after", "then")]
    found = {(Path(p.path).name, p.line): p.message for p in problems}
    assert set(found) == {("deep.jsonl", 2), ("first.jsonl", 1), ("whole.json", 1)}, found
    assert all("nested deeper than" in m for m in found.values()), found


def _with_start(name: str, start: object) -> str:
    """A request line whose span 2 starts at ``start`` (written as a raw JSON number, not a string)."""
    request = t.request(t.looping(name))
    request["resourceSpans"][0]["scopeSpans"][0]["spans"][2]["startTimeUnixNano"] = "@START@"
    return json.dumps(request).replace('"@START@"', str(start))


def test_numbers_beyond_their_wire_type_are_problems_and_the_feed_goes_on(tmp_path: Path) -> None:
    big_int = t.request(t.looping("bigint"))
    big_int["resourceSpans"][0]["scopeSpans"][0]["spans"][3]["attributes"].append(
        {"key": "llm.token_count.total", "value": {"intValue": str(10**30)}})
    jaeger = t.to_jaeger(t.looping("jaeger"))
    jaeger["data"][0]["spans"][1]["startTime"] = 10**30
    jaeger["data"][0]["spans"][2]["duration"] = 2**64
    (tmp_path / "j.json").write_text(json.dumps(jaeger))
    path = t.write_lines(tmp_path / "numbers.jsonl", [
        _with_start("int400", "1" + "0" * 400),  # an integer literal of 10^400: past any float
        _with_start("float400", "1e400"),  # JSON's 1e400 is float infinity
        _with_start("digits", "9" * 5000),  # past Python's int-from-text digit limit: a ValueError in json
        _with_start("u64", 2**64),  # one past fixed64
        big_int,
        t.request(t.healthy("fine")),
    ])
    ids, problems = _replay(path, tmp_path / "j.json")
    # a span with a bad number is skipped, its trace still replays; the line with an unparsable number is skipped
    assert ids == [t._id(n, 16) for n in ("int400", "float400", "u64", "bigint", "fine", "jaeger")]
    by_line = {(Path(p.path).name, p.line): p.message for p in problems}
    assert "startTimeUnixNano" in by_line[("numbers.jsonl", 1)] and "out of range" in by_line[("numbers.jsonl", 1)]
    assert "startTimeUnixNano" in by_line[("numbers.jsonl", 2)] and "not finite" in by_line[("numbers.jsonl", 2)]
    assert "not JSON" in by_line[("numbers.jsonl", 3)] and "digits" in by_line[("numbers.jsonl", 3)]
    assert "out of range" in by_line[("numbers.jsonl", 4)]
    assert "intValue" in by_line[("numbers.jsonl", 5)] and "int64" in by_line[("numbers.jsonl", 5)]
    jaeger_messages = [p.message for p in problems if p.path.endswith("j.json")]
    assert any("startTime" in m and "out of range" in m for m in jaeger_messages), jaeger_messages
    assert any("duration" in m and "out of range" in m for m in jaeger_messages), jaeger_messages


_UNDER_LIMIT = textwrap.dedent("""
    import json, resource, sys
    from spanbreaker.replay import readers, replay
    readers.MAX_RECORD_BYTES = int(sys.argv[1])
    size = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmSize:")) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size + int(sys.argv[2]), resource.RLIM_INFINITY))
    problems = []
    ids = [r.trace_id for r in replay(sys.argv[3:], problems=problems)]
    print(json.dumps({"ids": ids, "problems": [[p.path, p.line, p.message] for p in problems]}))
""")


def _wide_gzip(path: Path, head: bytes, wide_mib: int, tail: bytes) -> Path:
    """A gzip whose text is ``head``, ``wide_mib`` MiB of 4-byte UTF-8 characters, ``tail``: tiny on disk, 4x its
    characters as Python text. Made of repeated gzip members (one member compressed once), so it is quick to make."""
    member = gzip.compress(("\U0001d11e" * (1 << 18)).encode(), compresslevel=9)  # 1 MiB of text
    path.write_bytes(gzip.compress(head) + member * wide_mib + gzip.compress(tail))
    return path


def test_memory_is_bounded_in_bytes_and_an_over_long_first_line_skips_that_line_only(tmp_path: Path) -> None:
    cap, headroom = 4 << 20, 160 << 20  # the reader may hold its cap a few times over, not the 256 MiB of text
    before, after = json.dumps(t.request(t.looping("before"))), json.dumps(t.request(t.healthy("after")))
    pad = '{"resourceSpans": [], "pad": "'
    lines = _wide_gzip(tmp_path / "lines.jsonl.gz", f"{before}\n{pad}".encode(), 64, f'"}}\n{after}\n'.encode())
    first = _wide_gzip(tmp_path / "first.jsonl.gz", pad.encode(), 64, f'"}}\n{before}\n'.encode())
    document = _wide_gzip(tmp_path / "doc.json.gz", b'{"data": [{"spans": [], "pad": "', 64, b'"}]}\n')
    pretty = _wide_gzip(tmp_path / "pretty.json.gz", b'{\n "data": [\n  {"spans": [], "pad": "', 64, b'"}\n ]\n}\n')
    done = subprocess.run([sys.executable, "-c", _UNDER_LIMIT, str(cap), str(headroom), lines, first, document, pretty],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["ids"] == [t._id(n, 16) for n in ("before", "after", "before")]
    found = {(Path(p).name, line): message for p, line, message in out["problems"]}
    assert set(found) == {("lines.jsonl.gz", 2), ("first.jsonl.gz", 1), ("doc.json.gz", 1), ("pretty.json.gz", 0)}
    assert all(f"{cap:,} bytes" in m for m in found.values()), found
    assert "line longer than" in found[("lines.jsonl.gz", 2)]
    assert "document larger than" in found[("pretty.json.gz", 0)]


def test_a_damaged_start_of_a_line_file_does_not_make_it_one_document(tmp_path: Path) -> None:
    path = t.write_lines(tmp_path / "start.jsonl", [
        '{"resourceSpans": [ cut off', "a log line", json.dumps({"something": "else"}),
        t.request(t.looping("one")), "", t.request(t.healthy("two"))])
    ids, problems = _replay(path)
    assert ids == [t._id("one", 16), t._id("two", 16)]
    assert [(p.line, p.message.split(" (")[0].split(";")[0]) for p in problems] == [
        (1, "not JSON"), (2, "not JSON"), (3, "not an OTLP/JSON ExportTraceServiceRequest")]


def test_traces_without_a_local_root_are_handed_on_before_the_end_of_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A service's export whose local roots have remote parents: no trace ever gets its root, and the reader
    used to hold every span of the file until its end."""
    monkeypatch.setattr(readers, "MAX_HELD_SPANS", 100)
    requests = []
    for i in range(6):
        spans = t.looping(f"remote{i}", steps=12)  # 37 spans each
        spans[0]["parentSpanId"] = t._id(f"caller{i}", 8)  # the root's parent is in another service
        requests.append(t.request(spans))
    path = t.write_lines(tmp_path / "remote.jsonl", requests)
    problems: list[Problem] = []
    read_at: list[int] = []
    position = [0]
    traces = []
    for trace in readers.read_file(path, problems.append, lambda at: position.__setitem__(0, at)):
        read_at.append(position[0])
        traces.append(trace)
    assert [tr.trace_id_hex for tr in traces] == [t._id(f"remote{i}", 16) for i in range(6)]
    assert all(len(tr.spans) == 37 for tr in traces)
    assert read_at[0] < path.stat().st_size  # handed on while the file was still being read
    assert len(problems) == 1 and problems[0].line == 3 and "more than 100 spans held" in problems[0].message
