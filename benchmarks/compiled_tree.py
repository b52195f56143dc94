"""A copy of the source tree with the hot path compiled by mypyc, to measure what compiled code changes.

Not how spanbreaker ships (it is pure Python): an experiment for BENCHMARKS.md section 3. The modules a span's
hooks and a replay run through (the engine, the trace state and tool history, the signals and convention
readers, the breaker and every detector) are compiled from the same source, unchanged; the SDK façade is not (it
subclasses the SDK's ``SpanProcessor``, which mypyc cannot compile against). Then run any benchmark on the copy:

    python benchmarks/compiled_tree.py /tmp/compiled
    PYTHONPATH=/tmp/compiled/src python benchmarks/processor_cost.py --shape smolagents

Needs mypy (the dev extra) and a C compiler with the Python headers; takes a minute or two.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = ["engine", "tracestate", "progress", "signals", "fingerprint", "breaker", "verdict",
           "conventions/read", "conventions/tool_text", "conventions/openinference"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="a new directory for the compiled copy")
    args = parser.parse_args()
    if args.out.exists():
        parser.error(f"{args.out} exists: give a new directory")
    source = args.out / "src"
    shutil.copytree(ROOT / "src", source, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    package = source / "spanbreaker"
    files = [f"spanbreaker/{name}.py" for name in MODULES]
    files += sorted(f"spanbreaker/detectors/{path.name}" for path in (package / "detectors").glob("*.py")
                    if path.name != "__init__.py")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}  # the copy's modules only
    built = subprocess.run([sys.executable, "-m", "mypyc", *files], cwd=source, env=env, capture_output=True,
                           text=True)
    if built.returncode:
        sys.exit(f"mypyc failed:\n{built.stdout[-4000:]}{built.stderr[-4000:]}")
    shutil.rmtree(source / "build", ignore_errors=True)
    print(f"compiled {len(files)} modules: PYTHONPATH={source}")


if __name__ == "__main__":
    main()
