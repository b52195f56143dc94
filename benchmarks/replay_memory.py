"""Peak memory of ``spanbreaker replay`` on a small gzip that unpacks to gigabytes of wide characters.

Why: replay reads what users hand it, and a 1.9 MB gzip of 4-byte UTF-8 characters is 1.9 GB of text; held as
Python text that is 4x its characters, and a reader that copies it holds it twice. The reader must hold at most
its per-record byte cap (``MAX_RECORD_BYTES``) of it, skip it with a ``file:line: message`` and read the rest.

Each measurement is one ``spanbreaker replay FILE --json`` subprocess; its peak RSS, CPU and wall time come from
``os.wait4``. The baseline, measured in the same run, is the same command on the same file's valid lines alone.

    python benchmarks/replay_memory.py [--text-mib 1824] [--src DIR]

``--src`` runs another checkout's ``src`` (e.g. the code before a change) through the same measurement.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.replay import traces as t

MEMBER_MIB = 16


def wide_gzip(path: Path, head: bytes, text_mib: int, tail: bytes) -> None:
    """``head``, ``text_mib`` MiB of U+1D11E (4 UTF-8 bytes each) and ``tail``, as repeated gzip members: the
    wide part is compressed once (level 9), so making a gigabyte of text takes a fraction of a second."""
    member = gzip.compress(("\U0001d11e" * (MEMBER_MIB << 18)).encode(), compresslevel=9)
    with path.open("wb") as out:
        out.write(gzip.compress(head))
        for _ in range(text_mib // MEMBER_MIB):
            out.write(member)
        out.write(gzip.compress(tail))


def measure(path: Path, src: str | None) -> dict[str, float | int]:
    """Run the command on ``path``; its output goes to files so that ``os.wait4`` reaps it and gives its rusage."""
    env = dict(os.environ, **({"PYTHONPATH": src} if src else {}))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "spanbreaker.cli", "replay", str(path), "--json"],
                                 stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        traces, stderr = len(out.read().splitlines()), err.read().decode(errors="replace")
    problems = [line for line in stderr.splitlines() if line.startswith("spanbreaker replay:")]
    return {"peak_rss_mib": usage.ru_maxrss / 1024, "cpu_s": usage.ru_utime + usage.ru_stime, "wall_s": wall,
            "exit": child.returncode, "traces": traces, "problems": len(problems),
            "traceback": int("Traceback" in stderr)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--text-mib", type=int, default=1824, help="MiB of wide-character text (default 1824)")
    parser.add_argument("--src", help="PYTHONPATH for the measured command (another checkout's src)")
    args = parser.parse_args()
    before, after = json.dumps(t.request(t.looping("before"))), json.dumps(t.request(t.healthy("after")))
    with tempfile.TemporaryDirectory() as tmp:
        files = {
            "baseline: the valid lines alone": Path(tmp) / "baseline.jsonl.gz",
            "wide one-line document first, then a request line": Path(tmp) / "document.jsonl.gz",
            "request, wide line, request": Path(tmp) / "lines.jsonl.gz",
        }
        files["baseline: the valid lines alone"].write_bytes(gzip.compress(f"{before}\n{after}\n".encode()))
        wide_gzip(files["wide one-line document first, then a request line"],
                  b'{"data": [{"spans": [], "pad": "', args.text_mib, f'"}}]}}\n{after}\n'.encode())
        wide_gzip(files["request, wide line, request"], f'{before}\n{{"resourceSpans": [], "pad": "'.encode(),
                  args.text_mib, f'"}}\n{after}\n'.encode())
        print(f"python {sys.version.split()[0]}; src: {args.src or 'installed'}; wide text {args.text_mib} MiB")
        base = 0.0
        for label, path in files.items():
            got = measure(path, args.src)
            base = base or float(got["peak_rss_mib"])
            print(f"{label}: gzip {path.stat().st_size / 1e6:.2f} MB; peak RSS {got['peak_rss_mib']:,.0f} MiB "
                  f"({got['peak_rss_mib'] / base:.2f}x baseline); "
                  f"CPU {got['cpu_s']:.1f} s, wall {got['wall_s']:.1f} s; "
                  f"exit {got['exit']}, {got['traces']} traces, {got['problems']} problems"
                  + ("; TRACEBACK" if got["traceback"] else ""))


if __name__ == "__main__":
    main()
