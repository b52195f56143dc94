"""``spanbreaker replay`` as users run it (a subprocess of the installed console script's module): exit status,
``--json`` agreeing with the library, the HTML page's structure and numbers (parsed with html.parser)."""

from __future__ import annotations

import gc
import json
import re
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from spanbreaker.cli import main
from spanbreaker.replay import replay
from spanbreaker.replay.report import usd

from . import traces as t


def run_cli(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spanbreaker.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=60, env=env)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "runs.jsonl.gz"
    resource = {"service.name": "agent-svc", "deployment.environment": "test"}
    return t.write_lines(path, [t.request(t.looping("loop"), resource), t.request(t.healthy("fine"), resource),
                                t.request(t.looping("loop2", steps=20), resource)], gz=True)


class DataFields(HTMLParser):
    """Collects ``data-field`` values: the summary's, per ``section[data-trace-id]``, per sweep row
    (``tr[data-config]``), and the rows of each trace's table of counted calls."""

    def __init__(self) -> None:
        super().__init__()
        self.summary: dict[str, str] = {}
        self.traces: dict[str, dict[str, str]] = {}
        self.detectors: dict[str, str] = {}
        self.configs: dict[str, dict[str, str]] = {}
        self.call_rows: dict[str, int] = {}
        self.tags: set[str] = set()
        self._trace: str | None = None
        self._detector: str | None = None
        self._config: str | None = None
        self._in_calls = False
        self._field: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.add(tag)
        if tag == "section" and a.get("data-trace-id"):
            self._trace = a["data-trace-id"]
            self.traces[self._trace or ""] = {}
        if tag == "tr" and a.get("data-detector"):
            self._detector = a["data-detector"]
        if tag == "tr" and a.get("data-config"):
            self._config = a["data-config"] or ""
            self.configs[self._config] = {}
        if tag == "table" and a.get("data-field-table") == "trip_calls":
            self._in_calls = True
        if tag == "tr" and self._in_calls and self._trace is not None:
            self.call_rows[self._trace] = self.call_rows.get(self._trace, -1) + 1  # the header row is not a call
        if a.get("data-field"):
            self._field, self._text = a["data-field"], []

    def handle_data(self, data: str) -> None:
        if self._field is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._field is not None and tag in ("dd", "td"):
            value = "".join(self._text).strip()
            if self._detector is not None and self._field == "trips":
                self.detectors[self._detector] = value
            elif self._config is not None:
                self.configs[self._config][self._field] = value
            elif self._trace is not None:
                self.traces[self._trace][self._field] = value
            else:
                self.summary[self._field] = value
            self._field = None
        if tag == "section":
            self._trace = None
        if tag == "tr":
            self._detector = self._config = None
        if tag == "table":
            self._in_calls = False


def parse_html(text: str) -> DataFields:
    parser = DataFields()
    parser.feed(text)
    return parser


def check_html_matches_json(page: DataFields, lines: list[dict[str, Any]]) -> None:
    tripped = [line for line in lines if line["tripped"]]
    assert page.summary["traces"] == str(len(lines))
    assert page.summary["tripped"] == str(len(tripped))
    assert page.summary["calls_after_trip"] == str(sum(line["calls_after_trip"] for line in lines))
    assert set(page.traces) == {line["trace_id"] for line in tripped}
    for line in tripped:
        fields = page.traces[line["trace_id"]]
        for key in ("detector", "reason", "step", "calls_after_trip", "model_calls_after", "tool_calls_after",
                    "tokens_after_trip"):
            assert fields[key] == str(line[key]), key
        assert fields["outcome"] == (line["outcome"] or "not labelled")
        assert fields["cost_after_trip_usd"] == usd(line["cost_after_trip_usd"])
        assert page.call_rows.get(line["trace_id"], 0) == len(line["trip_calls"])
    by_detector: dict[str, int] = {}
    for line in tripped:
        by_detector[line["detector"]] = by_detector.get(line["detector"], 0) + 1
    assert page.detectors == {k: str(v) for k, v in by_detector.items()}


def test_json_lines_match_the_library_and_html_matches_the_json(runs: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    done = run_cli("replay", runs, "--json", "--html", page)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    expected = [r.as_json() for r in replay([runs])]
    for line in lines + expected:
        line.pop("source")
    assert lines == expected
    assert [(line["tripped"], line["detector"]) for line in lines] == [
        (True, "tool_repeat"), (False, None), (True, "tool_repeat")]
    first = lines[0]
    assert {"trace_id", "tripped", "detector", "reason", "calls_after_trip", "resource"} <= set(first)
    assert first["resource"] == {"service.name": "agent-svc", "deployment.environment": "test"}
    assert first["calls_after_trip"] == 14 and lines[2]["calls_after_trip"] == 30
    assert "2 of 3 traces would have tripped" in done.stderr
    html = page.read_text()
    assert "<script" not in html and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    parsed = parse_html(html)
    assert {"svg", "rect", "line", "table", "details"} <= parsed.tags
    check_html_matches_json(parsed, lines)


def test_human_output_lists_verdicts_and_the_summary_by_detector(runs: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = in_process(capsys, "replay", runs)
    assert status == 0, err
    assert "2 of 3 traces would have tripped" in out
    assert "tool_repeat" in out and "Step 5" in out and "agent-svc" in out
    assert "model calls saved" in out


def test_skipped_input_exits_1_and_names_file_and_line(runs: Path, tmp_path: Path) -> None:
    bad = t.write_lines(tmp_path / "bad.jsonl", [t.request(t.healthy("ok")), "{not json"])
    done = run_cli("replay", bad, runs, "--json")
    assert done.returncode == 1
    assert f"{bad}:2: not JSON" in done.stderr
    assert len(done.stdout.splitlines()) == 4  # the good trace of bad.jsonl and the three of runs


def in_process(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    """The same ``main`` in this process (cheaper than a subprocess for the cases that need no isolation)."""
    try:
        status = main([str(a) for a in args])
    except SystemExit as exc:  # argparse's usage errors and --help
        status = int(exc.code or 0)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_usage_errors_exit_2(tmp_path: Path, runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert in_process(capsys, "replay")[0] == 2
    assert in_process(capsys, "replay", tmp_path / "absent.jsonl")[0] == 2
    config = tmp_path / "bad.toml"
    config.write_text("tool_repeat_max = 0\n")
    status, _, err = in_process(capsys, "replay", runs, "--config", config)
    assert status == 2 and "tool_repeat_max" in err
    assert in_process(capsys)[0] == 2


def test_config_file_changes_the_verdicts(tmp_path: Path, runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "loose.toml"
    config.write_text('tool_repeat_max = 50\nfixation_max = 50\nexploration_window = 1000\nmode = "enforce"\n')
    status, out, err = in_process(capsys, "replay", runs, "--json", "--config", config)
    assert status == 0, err
    assert [json.loads(line)["tripped"] for line in out.splitlines()] == [False, False, False]


def test_help_lists_the_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = in_process(capsys, "--help")
    assert status == 0 and "replay" in out


def test_python_dash_m_runs_the_command() -> None:
    """``python -m spanbreaker`` where the ``spanbreaker`` script is not on the PATH."""
    done = subprocess.run([sys.executable, "-m", "spanbreaker", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "replay" in done.stdout, done.stderr


def test_long_inputs_show_a_progress_bar_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    big = t.agent_trace("big", [(f"cat part{i}.txt", f"line {i}\n" * 12_000) for i in range(12)])
    path = t.write_lines(tmp_path / "big.jsonl", [t.request(big)])
    assert path.stat().st_size > 1024 * 1024
    for name, value in (("TTY_COMPATIBLE", "1"), ("TTY_INTERACTIVE", "1"), ("COLUMNS", "120")):
        monkeypatch.setenv(name, value)
    status, _, err = in_process(capsys, "replay", path, "--json")
    assert status == 0 and "replaying" in err
    status, _, err = in_process(capsys, "replay", path, "--json", "--no-progress")
    assert status == 0 and "replaying" not in err


def test_export_writes_marked_spans_that_replay_to_the_same_verdicts(runs: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    exported = tmp_path / "marked.jsonl"
    status, out, err = in_process(capsys, "replay", runs, "--json", "--export", exported)
    assert status == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    requests = [json.loads(line) for line in exported.read_text().splitlines()]
    assert len(requests) == len(lines)
    spans = [s for r in requests for ss in r["resourceSpans"][0]["scopeSpans"] for s in ss["spans"]]
    marked = {s["traceId"] for s in spans if any(a["key"] == "spanbreaker.tripped" for a in s["attributes"])}
    assert marked == {line["trace_id"] for line in lines if line["tripped"]}
    assert requests[0]["resourceSpans"][0]["resource"]["attributes"] == [
        {"key": "service.name", "value": {"stringValue": "agent-svc"}},
        {"key": "deployment.environment", "value": {"stringValue": "test"}}]
    again = [r.as_json() for r in replay([exported])]
    assert [(r["trace_id"], r["detector"], r["step"], r["calls_after_trip"]) for r in again] == [
        (line["trace_id"], line["detector"], line["step"], line["calls_after_trip"]) for line in lines]


PROBLEM_LINE = re.compile(r"^spanbreaker replay: (?P<path>.+?):(?P<line>\d+): (?P<message>.+)$")


def test_readme_promise_bad_input_is_file_line_message_the_rest_is_read_and_exit_status_0_1_2(
        tmp_path: Path) -> None:
    """README: "Bad input is reported as `file:line: message` and the rest is read; the exit status is 0 clean,
    1 something skipped, 2 usage error" - run as the installed ``spanbreaker`` command."""
    command = [str(Path(sys.executable).with_name("spanbreaker")), "replay"]
    clean = tmp_path / "clean"
    clean.mkdir()
    t.write_lines(clean / "runs.jsonl.gz", [t.request(t.looping("c1")), t.request(t.healthy("c2"))], gz=True)
    page = tmp_path / "clean.html"
    done = subprocess.run([*command, clean, "--html", page], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    assert parse_html(page.read_text()).summary["traces"] == "2"

    huge_start = json.dumps(t.request(t.looping("bigtime"))).replace(
        f'"startTimeUnixNano": "{t.T0 + 1000}"', '"startTimeUnixNano": 1' + "0" * 400, 1)
    bad = t.write_lines(tmp_path / "bad.jsonl", [
        t.request(t.looping("first")),
        "[" * 100_000,  # nesting past the JSON parser
        huge_start,  # a time past any float: the span is skipped, its trace replays
        "9" * 5000,  # an integer past Python's digit limit
        "a log line",
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}),
        t.request(t.healthy("last")),
    ])
    page = tmp_path / "bad.html"
    done = subprocess.run([*command, bad, clean, "--json", "--html", page], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stderr
    problems = [PROBLEM_LINE.match(line) for line in done.stderr.splitlines()[:-1]]
    assert all(problems), done.stderr
    assert [(m["path"], int(m["line"])) for m in problems if m] == [(str(bad), n) for n in (2, 3, 4, 5, 6)]
    assert "Traceback" not in done.stderr and done.stderr.splitlines()[-1].endswith("5 input problem(s)")
    verdicts = [json.loads(line) for line in done.stdout.splitlines()]
    assert [v["trace_id"] for v in verdicts] == [t._id(n, 16) for n in ("first", "bigtime", "last", "c1", "c2")]
    assert parse_html(page.read_text()).summary["traces"] == "5"

    for usage in ([], [tmp_path / "absent.jsonl"], [bad, "--config", tmp_path / "absent.toml"], [bad, "--bogus"]):
        done = subprocess.run([*command, *map(str, usage)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, (usage, done.stderr)


def test_a_bug_while_replaying_is_reported_and_the_report_still_written(
        runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Bad input never raises; should a bug in spanbreaker raise mid-run, the traces before it keep their report."""
    from spanbreaker.replay.feed import Feeder

    real_feed, fed = Feeder.feed, []

    def failing_feed(self: Feeder, trace: Any) -> None:
        if len(fed) == 2:
            raise ZeroDivisionError("a stand-in bug")
        fed.append(trace)
        real_feed(self, trace)

    monkeypatch.setattr(Feeder, "feed", failing_feed)
    page = tmp_path / "report.html"
    status, out, err = in_process(capsys, "replay", runs, "--json", "--html", page)
    assert status == 1
    assert f"spanbreaker replay: {runs}: internal error, the rest is not replayed (ZeroDivisionError" in err
    assert len(out.splitlines()) == 2 and parse_html(page.read_text()).summary["traces"] == "2"


def test_the_progress_bar_starts_no_thread_so_jobs_can_fork(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """On a terminal the bar refreshes from the replay's own progress calls: rich's refresh thread would make
    ``--jobs`` spawn its workers (a fork must not copy a process with other threads running)."""
    from spanbreaker.replay import parallel

    big = t.agent_trace("big", [(f"cat part{i}.txt", f"line {i}\n" * 12_000) for i in range(12)])
    path = t.write_lines(tmp_path / "big.jsonl", [t.request(big), t.request(t.healthy("small"))])
    for name, value in (("TTY_COMPATIBLE", "1"), ("TTY_INTERACTIVE", "1"), ("COLUMNS", "120")):
        monkeypatch.setenv(name, value)
    before = set(threading.enumerate())
    seen: list[set[threading.Thread]] = []
    choose = parallel.start_method

    def watched() -> str:
        parallel.wait_loaded(timeout=30.0)
        seen.append(set(threading.enumerate()) - before)
        return choose()

    monkeypatch.setattr(parallel, "start_method", watched)
    status, out, err = in_process(capsys, "replay", path, "--json", "--jobs", "2")
    assert status == 0 and "replaying" in err and len(out.splitlines()) == 2
    assert seen == [set()]


def test_the_command_replays_with_its_heap_frozen_and_leaves_it_unfrozen(
        runs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """What the command set up before replaying is out of the collector's view while it replays (full collections
    walk only the replay's objects), and back in it afterwards: the command may run inside another program."""
    from spanbreaker.replay.feed import Feeder

    real_feed, frozen = Feeder.feed, []

    def watched_feed(self: Feeder, trace: Any) -> None:
        frozen.append(gc.get_freeze_count())
        real_feed(self, trace)

    monkeypatch.setattr(Feeder, "feed", watched_feed)
    assert gc.get_freeze_count() == 0
    status, out, err = in_process(capsys, "replay", runs, "--json")
    assert status == 0, err
    assert len(out.splitlines()) == 3 and len(frozen) == 3 and all(count > 0 for count in frozen)
    assert gc.get_freeze_count() == 0
