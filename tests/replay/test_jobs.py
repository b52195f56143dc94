"""``--jobs N`` and ``--shard K/N``: the same verdicts, in the same order, whatever the number of worker
processes; shards partition the traces by a stable hash of the trace id; bad values are usage errors (exit 2)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from spanbreaker.replay import Problem, replay
from spanbreaker.replay.shard import Shard, trace_hash

from . import traces as t
from . import verdicts
from .test_cli import in_process

WHO_AND_WHEN = verdicts.COMMITTED[0]


def json_lines(capsys: pytest.CaptureFixture[str], *args: str | Path) -> list[dict[str, object]]:
    status, out, err = in_process(capsys, "replay", "--json", "--no-progress", *args)
    assert status == 0, err
    return [json.loads(line) for line in out.splitlines()]


@pytest.fixture(scope="module")
def spread(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Traces spread over lines as the Collector writes them: each trace's spans in two batches, the root (it ends
    last) in the second, batches of different traces interleaved, one trace whose root never comes."""
    lines = []
    traces = [t.looping(f"loop{i}") if i % 2 else t.healthy(f"fine{i}") for i in range(8)]
    for first, second in zip(traces[::2], traces[1::2], strict=True):
        lines += [t.request(first[1:]), t.request(second[1:]), t.request(first[:1] + second[:1])]
    lines.append(t.request(t.looping("rootless")[1:]))
    return t.write_lines(tmp_path_factory.mktemp("jobs") / "spread.jsonl", lines)


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Twelve small runs, one a line, half of them loops."""
    runs = [t.request(t.looping(f"loop{i}") if i % 2 else t.healthy(f"fine{i}")) for i in range(12)]
    return t.write_lines(tmp_path_factory.mktemp("jobs") / "many.jsonl.gz", runs, gz=True)


def test_jobs_2_gives_the_json_of_jobs_1_line_for_line(capsys: pytest.CaptureFixture[str]) -> None:
    one = json_lines(capsys, WHO_AND_WHEN)
    two = json_lines(capsys, WHO_AND_WHEN, "--jobs", "2")
    assert len(one) == 184 and sum(line["tripped"] is True for line in one) >= 1
    assert two == one


def test_jobs_merge_traces_spread_over_lines_in_the_order_of_one_process(spread: Path) -> None:
    one = [r.as_json() for r in replay(spread)]
    assert len(one) == 9 and sum(r["tripped"] for r in one) == 4  # the four loops with their root
    assert one[-1]["spans"] == len(t.looping("rootless")) - 1  # held to the end of the file: the last one
    assert [r.as_json() for r in replay(spread, jobs=3)] == one


def test_shards_partition_the_traces_and_keep_each_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    whole = {line["trace_id"]: line for line in json_lines(capsys, WHO_AND_WHEN)}
    parts = [json_lines(capsys, WHO_AND_WHEN, "--shard", f"{k}/3") for k in (1, 2, 3)]
    ids = [[line["trace_id"] for line in part] for part in parts]
    assert sorted(i for part in ids for i in part) == sorted(whole)  # every trace once
    assert all(len(part) > 30 for part in ids)  # the hash spreads them
    for part in parts:
        assert all(line == whole[line["trace_id"]] for line in part)
        assert [line["trace_id"] for line in part] == [i for i in whole if i in {x["trace_id"] for x in part}]
    assert json_lines(capsys, WHO_AND_WHEN, "--shard", "2/3", "--jobs", "2") == parts[1]


def test_shard_is_a_stable_hash_of_the_trace_id() -> None:
    """The same split on every machine and run: BLAKE2b of the id, not Python's per-process hash."""
    assert trace_hash(1) == 0xBE28C32B13FEBF82  # pinned: a change would move traces between machines' shards
    assert trace_hash(0x5B6A0D8E9F0A1B2C3D4E5F6071829304) == 0x08770D25645D532D
    sequential = [Shard(k, 4) for k in range(4)]
    counts = [sum(shard.keeps(i) for i in range(1, 4001)) for shard in sequential]
    assert sum(counts) == 4000 and min(counts) > 900  # sequential ids spread evenly too
    assert Shard.parse("2/4") == Shard(1, 4) and str(Shard(1, 4)) == "2/4"


@pytest.mark.parametrize(("args", "message"), [
    (("--shard", "0/4"), "K must be between 1 and N (4)"),
    (("--shard", "5/4"), "K must be between 1 and N (4)"),
    (("--shard", "1/0"), "N must be at least 1"),
    (("--shard", "half"), "is not K/N"),
    (("--jobs", "0"), "is not a number of worker processes"),
    (("--jobs", "two"), "is not a number of worker processes"),
])
def test_bad_jobs_or_shard_is_a_usage_error(args: tuple[str, str], message: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = in_process(capsys, "replay", WHO_AND_WHEN, *args)
    assert status == 2 and out == ""
    assert f"argument {args[0]}: " in err and message in err


def test_export_and_sweep_with_jobs(many: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The marks written by --export and the sweep table are the same with workers as without."""
    outputs = []
    for jobs in ("1", "2"):
        exported = tmp_path / f"marked-{jobs}.jsonl"
        lines = json_lines(capsys, many, "--jobs", jobs, "--export", exported,
                           "--sweep", "tool_repeat_max=3,8")
        outputs.append((lines, exported.read_text()))
    assert outputs[0] == outputs[1]
    assert "spanbreaker.tripped" in outputs[0][1]


def test_readme_promise_jobs_and_shards(many: Path) -> None:
    """README: "`--jobs N` replays in N worker processes (`--jobs auto`: one per CPU the process may use), same
    output in the same order; `--shard K/N` takes the traces whose id hashes to shard K, so N machines split one
    archive and their outputs together are the whole replay" - as the installed command."""
    command = [str(Path(sys.executable).with_name("spanbreaker")), "replay", str(many), "--json"]
    whole = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout
    jobs = subprocess.run([*command, "--jobs", "2"], capture_output=True, text=True, timeout=120, check=True).stdout
    assert jobs == whole and len(whole.splitlines()) == 12
    auto = subprocess.run([*command, "--jobs", "auto"], capture_output=True, text=True, timeout=120, check=True).stdout
    assert auto == whole
    parts = [subprocess.run([*command, "--shard", f"{k}/2"], capture_output=True, text=True, timeout=120,
                            check=True).stdout.splitlines() for k in (1, 2)]
    assert sorted(parts[0] + parts[1]) == sorted(whole.splitlines()) and all(parts)


def test_each_problem_is_reported_by_the_shard_that_owns_its_trace(tmp_path: Path) -> None:
    """A shard skips other shards' lines without decoding them (the trace ids read from the bytes); a defect in
    such a line is reported once over all shards, by its trace's shard, and a line with no readable trace id by
    every shard (it is decoded everywhere)."""
    broken = t.looping("broken")
    del broken[3]["spanId"]
    lines = [t.request(t.healthy(f"fine{i}")) for i in range(6)] + [t.request(broken), "not json"]
    path = t.write_lines(tmp_path / "mixed.jsonl", lines)
    whole: list[Problem] = []
    assert len(list(replay(path, problems=whole))) == 7
    per_shard: list[list[Problem]] = []
    for k in range(3):
        found: list[Problem] = []
        list(replay(path, problems=found, shard=Shard(k, 3)))
        per_shard.append(found)
    missing_id = [p for p in whole if "spanId" in p.message]
    assert len(missing_id) == 1 and sum(p in found for found in per_shard for p in missing_id) == 1
    assert all(any("not JSON" in p.message for p in found) for found in per_shard)


def test_progress_with_jobs_climbs_to_the_whole_input(many: Path) -> None:
    """The progress bar's feed with workers: bytes read (the workers' mean), never backwards, ending at the total."""
    seen: list[tuple[int, int]] = []
    assert len(list(replay(many, jobs=2, progress=lambda done, total: seen.append((done, total))))) == 12
    total = many.stat().st_size
    assert seen and all(t == total for _, t in seen) and seen[-1][0] == total
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_workers_are_forked_only_while_no_other_thread_runs(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers forked (no re-import of spanbreaker and the price table) give the verdicts spawned ones do. A fork
    copies only the forking thread, so a lock another thread holds would stay held in the worker: with another
    thread alive (here one waiting on an event; in the CLI a progress bar's refresh thread), workers are spawned.
    The price table's background load is waited for rather than counted as such a thread."""
    from spanbreaker.replay import parallel

    idle = threading.Event()
    other = threading.Thread(target=idle.wait, daemon=True)
    other.start()
    try:
        assert parallel.start_method() == "spawn"
    finally:
        idle.set()
        other.join()
    if threading.active_count() == 1:  # pytest's own threads (a timeout watchdog) would make it spawn anyway
        assert parallel.start_method() == "fork"
    results = {}
    for method in ("fork", "spawn"):
        monkeypatch.setattr(parallel, "start_method", lambda chosen=method: chosen)
        results[method] = [r.as_json() for r in replay(many, jobs=2)]
    assert results["fork"] == results["spawn"] == [r.as_json() for r in replay(many)]


def test_skipping_other_shards_lines_reads_every_trace_id(tmp_path: Path) -> None:
    """A line is skipped unread only when every trace id in it belongs to other shards: one span of this shard's
    trace among others' makes the whole line decoded."""
    from spanbreaker.replay.readers import _other_shards_only

    shard = Shard(0, 2)
    mine = next(i for i in range(1, 1000) if shard.keeps(i))
    theirs = [i for i in range(1, 1000) if not shard.keeps(i)][:3]

    def line(*ids: int) -> bytes:
        return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": f"{i:032x}", "spanId": f"{n + 1:016x}"} for n, i in enumerate(ids)]}]}]}).encode()

    assert _other_shards_only(line(*theirs), shard)
    assert not _other_shards_only(line(theirs[0], mine, theirs[1]), shard)
    assert not _other_shards_only(line(theirs[0]).replace(b'"traceId": "', b'"traceId": "zz'), shard)
    assert not _other_shards_only(b'{"resourceSpans": []}', shard)


def test_an_archive_of_several_files_is_split_by_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Several files that share out evenly go to the workers whole (each gunzips only its own), with the output
    of one process, in its order; the progress bar still climbs to the whole input. One file, or files of very
    different sizes, are split by trace id."""
    from spanbreaker.replay import parallel

    with gzip.open(WHO_AND_WHEN, "rb") as corpus:
        lines = corpus.read().splitlines(keepends=True)
    archive = tmp_path / "archive"
    archive.mkdir()
    for part in range(4):
        with gzip.open(archive / f"part-{part}.jsonl.gz", "wb") as out:
            out.writelines(lines[part::4])
    files = sorted(archive.iterdir())
    plan = parallel.file_plan(files, 2)
    assert plan is not None and sorted(len(share) for share in plan) == [2, 2]
    assert parallel.file_plan(files[:1], 2) is None
    (archive / "part-0.jsonl.gz").write_bytes(gzip.compress(b"".join(lines)))  # one file far larger than the rest
    assert parallel.file_plan(files, 2) is None
    with gzip.open(archive / "part-0.jsonl.gz", "wb") as out:
        out.writelines(lines[0::4])
    one = json_lines(capsys, archive)
    assert len(one) == 184
    assert json_lines(capsys, archive, "--jobs", "2") == one
    seen: list[tuple[int, int]] = []
    assert len(list(replay(archive, jobs=2, progress=lambda done, total: seen.append((done, total))))) == 184
    total = sum(f.stat().st_size for f in files)
    assert seen[-1] == (total, total) and [d for d, _ in seen] == sorted(d for d, _ in seen)


@pytest.mark.skipif(shutil.which("taskset") is None or not hasattr(os, "sched_getaffinity"),
                    reason="needs taskset and CPU affinity (Linux)")
def test_jobs_auto_takes_the_cpus_the_process_may_use() -> None:
    """``--jobs auto`` counts the CPUs of the process's affinity (a container's or batch job's cpuset), not the
    machine's: pinned to one CPU, it replays in one process."""
    script = "from spanbreaker.replay.cli import _jobs; print(_jobs('auto'), _jobs(' AUTO '))"
    pinned = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=60, check=True).stdout.split()
    free = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          check=True).stdout.split()
    assert pinned == ["1", "1"]
    assert free == [str(len(os.sched_getaffinity(0)))] * 2
