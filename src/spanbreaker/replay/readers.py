"""Read recorded traces: OTLP/JSON (one request per line, or one request per file) and Jaeger JSON, plain or gzip.

Why a reader of our own rather than the SDK's: the SDK has no OTLP/JSON *decoder*, and replay must survive the
files people actually have (a cut-off gzip, a stray log line, a span without ids, a 50 MB attribute). Every
such defect becomes a :class:`~.recorded.Problem` naming the file and line, and reading goes on with the rest.

This module reads files: plain or gzip, line by line or as one document, bounded in bytes whatever they hold, and
groups the spans per trace. Decoding a record is :mod:`.otlp_json`'s and :mod:`.jaeger`'s. In the line-per-request
form a trace may be spread over several lines (the Collector's file exporter writes batches): a trace is handed on
once its root span is in and a later line brings none of its spans, and whatever is left at the end of the file.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import itertools
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .fields import MALFORMED, InputError, preview
from .gunzip import INFLATE_ERRORS, READ_ERRORS, open_gzip
from .jaeger import jaeger_list, jaeger_traces
from .otlp_json import otlp_body, otlp_spans, typed_spans
from .recorded import Problem, ProblemSink, RecordedSpan, RecordedTrace
from .shard import Shard

__all__ = ["MAX_HELD_SPANS", "MAX_RECORD_BYTES", "MAX_SPANS_PER_TRACE", "TRACE_FILE_SUFFIXES", "expand_paths",
           "file_size", "read_file", "read_traces"]

MAX_RECORD_BYTES = 64 * 1024 * 1024
"""Largest record read, in bytes (after gzip): one line of a line-per-request file, or a whole-file document
(one request, Jaeger JSON). A longer line is skipped with a problem and the lines after it are read; a larger
document is skipped. Why bytes, read as bytes: what the reader holds is then bounded whatever the characters (held
as text, a line of 4-byte characters is 4x its character count); decoded, one record takes a few times its size
(up to ~25x for a record of nothing but empty arrays), and only one record is held at a time."""
MAX_SPANS_PER_TRACE = 200_000
MAX_HELD_SPANS = 1_000_000
"""Spans held at once in traces waiting for their root span; past it the traces held longest are handed on."""
TRACE_FILE_SUFFIXES = (".json", ".jsonl", ".ndjson", ".otlp", ".gz")

# ------------------------------------------------------------------------------------------------ files
def expand_paths(paths: Iterable[str | Path], note: ProblemSink) -> list[Path]:
    """Files named, and the trace files (by suffix) of directories named, sorted; missing paths noted."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(TRACE_FILE_SUFFIXES))
            if not found:
                note(Problem(str(path), 0, "directory holds no trace files (*.json, *.jsonl, *.ndjson, *.gz)"))
            out.extend(found)
        elif path.is_file():
            out.append(path)
        else:
            note(Problem(str(path), 0, "no such file or directory"))
    return out


_READ_CHUNK = 1024 * 1024
"""Bytes read at a time when reading past an over-long line or filling a document's buffer."""
_REQUEST_START = re.compile(rb'\s*\{\s*"(resourceSpans|batches|result)"')
"""How an OTLP/JSON request line begins (the Collector writes ``resourceSpans`` first): judges a line cut at the cap."""


def _open_bytes(path: Path, stack: contextlib.ExitStack) -> tuple[io.BufferedIOBase, io.BufferedReader]:
    """The bytes of a plain or gzip file, told apart by the gzip magic number, not the name; and the raw file
    (its position is the progress through the file)."""
    raw = stack.enter_context(path.open("rb"))
    if raw.peek(2)[:2] == b"\x1f\x8b":
        return stack.enter_context(open_gzip(raw)), raw
    return raw, raw


def _lines(fh: io.BufferedIOBase, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, line) for every line, as bytes, each at most ``limit`` bytes. A longer line is read past in
    chunks and given as None: one record never makes the reader hold more than its cap, whatever the line holds."""
    number = 0
    while True:
        line = fh.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            while True:
                more = fh.readline(_READ_CHUNK)
                if not more or more.endswith(b"\n"):
                    break
            yield number, None
        else:
            yield number, line


class _NotJSON(Exception):
    """A record json cannot decode; ``line`` is 1-based within the record (0 unknown), ``truncated`` when the text
    ended first."""

    def __init__(self, message: str, line: int = 0, truncated: bool = False) -> None:
        super().__init__(message)
        self.message, self.line, self.truncated = message, line, truncated


def _text(data: bytes | bytearray) -> str:
    """UTF-8 text (a byte-order mark dropped); bytes that are not UTF-8 become U+FFFD rather than end the read."""
    return data.decode("utf-8-sig", "replace")


def _loads(text: str) -> Any:
    """``json.loads``, with every way it fails on bad input as :class:`_NotJSON`: a syntax error, nesting past the
    parser's recursion limit (RecursionError), an integer past Python's digit limit (ValueError), and a record too
    big for the memory left (MemoryError)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        truncated = not text[exc.pos:].strip()
        raise _NotJSON(f"{exc.msg} at column {exc.colno}", exc.lineno, truncated) from None
    except RecursionError:
        raise _NotJSON("nested deeper than the JSON parser can follow") from None
    except ValueError as exc:
        raise _NotJSON(str(exc).split(";")[0]) from None
    except MemoryError:
        raise _NotJSON("too large to decode in the memory available") from None


def _loads_bytes(data: bytes) -> Any:
    """A record decoded by orjson (several times faster than ``json``, straight from the bytes); whatever orjson
    refuses (not UTF-8, a byte-order mark, NaN, infinity, nesting past its limit, bad JSON) is decoded by
    :func:`_loads` as before, so such input reads as it did. One difference: orjson reads an integer past 64 bits
    as a float; every field replay reads a number from rejects such a value either way (ids and times are at most
    64 bits, ``intValue`` 63), only the message then shows it as a float."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return _loads(_text(data))


def _is_request(text: str) -> bool:
    if not text.lstrip().startswith("{"):
        return False
    try:
        return otlp_body(_loads(text)) is not None
    except _NotJSON:
        return False


def _has_request_line(text: str, cut: bool) -> bool:
    """Whether a line of ``text`` is an OTLP/JSON request, i.e. the file is one request per line. ``cut``: the
    text stops at the cap, so its last line is incomplete and is judged by how it begins."""
    lines = io.StringIO(text)
    for line in lines:
        if line.endswith("\n") or not cut:
            if _is_request(line):
                return True
        elif _REQUEST_START.match(line.encode("utf-8", "replace")[:64]):
            return True
    return False


@dataclass
class _Head:
    """The start of a file that may be one document: up to the cap and one byte more."""

    data: bytearray
    over: bool
    """Larger than the cap: the file is not read as one document."""
    error: Exception | None = None
    """A gzip or read error that ended the read."""


def _read_head(fh: io.BufferedIOBase, limit: int) -> _Head:
    data = bytearray()
    try:
        while len(data) <= limit:
            chunk = fh.read(min(_READ_CHUNK, limit + 1 - len(data)))
            if not chunk:
                break
            data += chunk
    except READ_ERRORS as exc:
        return _Head(data, len(data) > limit, exc)
    return _Head(data, len(data) > limit)


def _read_error(exc: Exception) -> str:
    detail = "truncated or corrupt gzip" if isinstance(exc, (EOFError, gzip.BadGzipFile, *INFLATE_ERRORS)) else "read"
    return f"{detail} error: {exc}; the rest of the file is skipped"


class _Grouper:
    """Collects spans per trace and hands a trace on once its root is in and a line after it brought none of its
    spans. The Collector writes a span when it ends, so a trace's root comes last and the next line completes it; a
    converter or exporter that writes spans as they start puts the root first, and the lines after it still belong
    to the trace (handed on at its root's line, such a trace was cut into its root and a fragment per later line).

    A trace whose root never comes (a service whose local roots have remote parents, a cut recording) would be
    held to the end of the file; past :data:`MAX_HELD_SPANS` held spans the traces held longest are handed on as
    read so far, so memory does not grow with the file.
    """

    def __init__(self, path: str, note: ProblemSink, shard: Shard | None = None) -> None:
        self.path = path
        self.note = note
        self.shard = shard
        self.traces: dict[int, RecordedTrace] = {}
        """Held traces, in the order their first span was read."""
        self.rooted: dict[int, int] = {}
        """Held traces whose root is in: the number of spans each held when the last line ended (-1 when its root
        came in this line), which tells whether this line brought more, without any work per span."""
        self.full: set[int] = set()
        self.order: dict[int, tuple[int, int]] = {}
        """Per held trace, where it was first read: (line, position of the span in the line's spans, counting
        those of other shards). Hands on rooted traces in file order without a scan."""
        self.line = 0
        self.position = 0
        self.held = 0
        self.overflowed = False

    def add(self, resource: dict[str, Any], span: RecordedSpan | None, line: int) -> None:
        """Hold ``span``; None (or a span of another shard) only counts a position."""
        if line != self.line:
            self.line, self.position = line, 0
        self.position += 1
        if span is None or (self.shard is not None and not self.shard.keeps(span.trace_id)):
            return
        trace = self.traces.get(span.trace_id)
        if trace is None:
            trace = RecordedTrace(span.trace_id, dict(resource), [], f"{self.path}:{line}")
            self.traces[span.trace_id] = trace
            self.order[span.trace_id] = (line, self.position)
        if len(trace.spans) >= MAX_SPANS_PER_TRACE:
            if span.trace_id not in self.full:
                self.full.add(span.trace_id)
                self.note(Problem(self.path, line, f"trace {trace.trace_id_hex} has more than "
                                                   f"{MAX_SPANS_PER_TRACE:,} spans; the rest are skipped"))
            return
        trace.spans.append(span)
        self.held += 1
        if span.parent_id is None and span.trace_id not in self.rooted:
            self.rooted[span.trace_id] = -1

    def complete(self, line: int) -> Iterator[RecordedTrace]:
        """After ``line`` (any line read, a skipped one included, so that every ``--jobs`` worker hands a trace on
        at the same line): the traces whose root is in and to which this line added no span; then, while too many
        spans are held, the traces held longest."""
        rooted = self.rooted
        if rooted:
            done = []
            for trace_id, counted in rooted.items():
                held = len(self.traces[trace_id].spans)
                if held == counted:
                    done.append(trace_id)
                else:
                    rooted[trace_id] = held
            for trace_id in sorted(done, key=self.order.__getitem__):
                yield self._pop(trace_id, line)
        while self.held > MAX_HELD_SPANS and self.traces:
            if not self.overflowed:
                self.overflowed = True
                self.note(Problem(self.path, line, f"more than {MAX_HELD_SPANS:,} spans held in traces whose root "
                                                   "span was not read yet; the traces held longest are replayed "
                                                   "as read so far (later spans of one replay as another trace)"))
            yield self._pop(next(iter(self.traces)), line)

    def _pop(self, trace_id: int, line: int) -> RecordedTrace:
        self.rooted.pop(trace_id, None)
        self.full.discard(trace_id)
        trace = self.traces.pop(trace_id)
        trace.order = (line, *self.order.pop(trace_id))
        self.held -= len(trace.spans)
        return trace

    def rest(self) -> Iterator[RecordedTrace]:
        for trace_id, trace in self.traces.items():
            trace.order = (sys.maxsize, *self.order[trace_id])
            yield trace
        self.traces.clear()
        self.order.clear()
        self.rooted.clear()
        self.held = 0


def read_file(path: Path, note: ProblemSink, progress: Callable[[int], None] | None = None,
              shard: Shard | None = None) -> Iterator[RecordedTrace]:
    """The traces of one file, in the order their first span appears; defects go to ``note``.

    A file is one request per line unless its first line is not a request and the whole file (at most
    :data:`MAX_RECORD_BYTES`) is one JSON document. Lines and documents are read as bytes and held one at a time,
    so memory is bounded by the cap in bytes whatever characters the file holds. ``progress`` is called with the
    bytes of the file consumed so far, after every line. ``shard``: only the traces it keeps.
    """
    name = str(path)
    limit = MAX_RECORD_BYTES
    grouper = _Grouper(name, note, shard)
    line_no = 0
    try:
        with contextlib.ExitStack() as stack:
            fh, raw = _open_bytes(path, stack)
            lines = _lines(fh, limit)
            first = next(((n, data) for n, data in lines if data is None or not data.isspace()), None)
            if first is None:
                note(Problem(name, 0, "file is empty"))
                return
            first_line, data = first
            # a first line over the cap is either an over-long batch or a one-line document past the cap: either
            # way that line alone is skipped and the lines after it (if any) are read
            if data is None or _is_request(_text(data)):
                lines = itertools.chain([first], lines)
            else:
                fh.seek(0)
                head = _read_head(fh, limit)
                if not _read_as_lines(head, name, first_line, note):
                    if not head.over and head.error is None:
                        yield from _read_document(head, name, first_line, note, shard)
                    return
                fh.seek(0)
                lines = _lines(fh, limit)  # from the start again, one line at a time
            for line_no, data in lines:
                if data is None:
                    note(Problem(name, line_no, f"line longer than {limit:,} bytes; skipped"))
                elif not data.isspace():
                    if shard is None or not _other_shards_only(data, shard):
                        _add_line(grouper, data, name, line_no, note, shard)
                    yield from grouper.complete(line_no)
                if progress is not None:
                    progress(raw.tell())
    except READ_ERRORS as exc:
        note(Problem(name, line_no + 1, _read_error(exc)))
    yield from grouper.rest()


def _read_as_lines(head: _Head, name: str, first_line: int, note: ProblemSink) -> bool:
    """Whether a file whose first line is not a request is still read line by line: it has a request line (a
    line-per-request file with a damaged start). When not, a head that cannot be a document is reported here."""
    text = _text(head.data)
    if _has_request_line(text, cut=head.over or head.error is not None):
        return True
    if head.error is not None:
        note(Problem(name, text.count("\n") + 1, _read_error(head.error)))
    elif head.over:
        note(Problem(name, 0, f"document larger than {MAX_RECORD_BYTES:,} bytes and not one request per line; "
                              "file skipped"))
    return False


_TRACE_ID_KEY = b'"traceId"'
_TRACE_ID_VALUE = re.compile(rb'\s*:\s*"([0-9a-fA-F]{1,32})"')


def _other_shards_only(data: bytes, shard: Shard) -> bool:
    """Whether a request line holds only other shards' traces, told from its bytes without decoding it: every
    ``"traceId"`` in it is a hex id, and none of them is this shard's. Anything else (an id in base64, no id, a
    line that is not JSON) is decoded as usual; a defect in a skipped line is its owning shard's to report.

    Each key is found with ``bytes.find`` (a C substring search) and its value read by a regex anchored right
    after it: a regex searching the whole line would step through every byte of it."""
    at = data.find(_TRACE_ID_KEY)
    if at < 0:
        return False
    last = b""
    while at >= 0:
        match = _TRACE_ID_VALUE.match(data, at + len(_TRACE_ID_KEY))
        if match is None:
            return False
        found = match.group(1)
        if found != last:  # a trace's spans come together: its id is hashed once per run of them
            if shard.keeps(int(found, 16)):
                return False
            last = found
        at = data.find(_TRACE_ID_KEY, match.end())
    return True


def _add_line(grouper: _Grouper, data: bytes, name: str, line_no: int, note: ProblemSink,
              shard: Shard | None = None) -> None:
    typed = typed_spans(data, shard)
    if typed is not None:
        for resource, span in typed:
            grouper.add(resource, span, line_no)
        return
    line_note = _line_note(note, name, line_no)
    try:
        document = _loads_bytes(data)
    except _NotJSON as exc:
        line_note(f"not JSON ({exc.message}); line skipped")
        return
    try:
        for resource, span in otlp_spans(document, line_note, shard):
            grouper.add(resource, span, line_no)
    except InputError as exc:
        line_note(f"{exc}; line skipped")
    except MALFORMED as exc:
        line_note(f"malformed request ({type(exc).__name__}: {preview(exc)}); rest of the line skipped")


def _line_note(note: ProblemSink, name: str, line: int) -> Callable[[str], None]:
    return lambda message: note(Problem(name, line, message))


def _read_document(head: _Head, name: str, first_line: int, note: ProblemSink,
                   shard: Shard | None = None) -> Iterator[RecordedTrace]:
    """A whole-file document: one OTLP request (maybe pretty-printed) or a Jaeger JSON download."""
    text = _text(head.data)
    head.data = bytearray()  # the text is what is parsed; the bytes need not be held beside it
    try:
        document = _loads(text)
    except _NotJSON as exc:
        kind = "truncated JSON" if exc.truncated else "not JSON"
        note(Problem(name, exc.line or first_line, f"{kind} ({exc.message}); file skipped"))
        return
    del text
    grouper = _Grouper(name, note, shard)
    doc_note = _line_note(note, name, 0)
    if otlp_body(document) is not None:
        source: Iterable[tuple[dict[str, Any], RecordedSpan | None]] = otlp_spans(document, doc_note, shard)
    elif jaeger_list(document) is not None:
        source = jaeger_traces(document, doc_note)
    else:
        note(Problem(name, first_line, "wrong format: expected OTLP/JSON (resourceSpans) or Jaeger JSON (data); "
                                       "file skipped"))
        return
    try:
        for resource, span in source:
            grouper.add(resource, span, first_line)
    except InputError as exc:
        doc_note(f"{exc}; file skipped")
    except MALFORMED as exc:
        doc_note(f"malformed document ({type(exc).__name__}: {preview(exc)}); rest of the file skipped")
    yield from grouper.rest()


def read_traces(paths: Iterable[str | Path], note: ProblemSink,
                progress: Callable[[int, int], None] | None = None, shard: Shard | None = None,
                only_files: frozenset[int] | None = None) -> Iterator[RecordedTrace]:
    """Every trace of every file (directories expanded), file by file; with ``shard``, those it keeps.

    ``progress(done, total)`` gets bytes consumed and total bytes over all files read (for a progress bar).
    ``only_files``: read only the files at these positions of the expanded list (a ``--jobs`` worker's share;
    traces keep their position in the whole list, so workers' verdicts merge in input order).
    """
    files = expand_paths(paths, note)
    total = sum(file_size(p) for index, p in enumerate(files) if only_files is None or index in only_files)
    done = 0
    for index, path in enumerate(files):
        if only_files is not None and index not in only_files:
            continue
        step = None if progress is None else (lambda at, base=done: progress(base + at, total))
        for trace in read_file(path, note, step, shard):
            trace.order = (index, *trace.order)
            yield trace
        done += file_size(path)
        if progress is not None:
            progress(done, total)


def file_size(path: Path) -> int:
    """Bytes on disk, 0 when the file cannot be read (it is then reported where it is opened)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0
