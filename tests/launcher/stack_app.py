"""Run the launcher example on top of an existing tracing stack, as an application that already has one would.

    opentelemetry-instrument python stack_app.py <stack>

Stacks: ``agno`` (Agno's ``setup_tracing`` with its SQLite span store), ``phoenix`` (``phoenix.otel.register``
exporting OTLP/HTTP to ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``), ``batch-otlp`` (a hand-made provider with a
BatchSpanProcessor to OTLP/gRPC at ``STACK_APP_GRPC_ENDPOINT``). None imports spanbreaker: the launcher's hook
must find the stack's provider by itself. After the run, one JSON line says what the stack itself recorded.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

from opentelemetry import trace

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "launcher_app.py"


def agno_stack(workdir: Path) -> Any:
    from agno.db.sqlite import SqliteDb
    from agno.tracing import setup_tracing

    db = SqliteDb(db_file=str(workdir / "agno-traces.db"))
    setup_tracing(db=db)
    return db


def phoenix_stack() -> None:
    from phoenix.otel import register

    register(project_name="spanbreaker-launcher", endpoint=os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"],
             batch=True, set_global_tracer_provider=True)


def batch_otlp_stack() -> None:
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "stack-batch-otlp"}))
    provider.add_span_processor(BatchSpanProcessor(
        OTLPSpanExporter(endpoint=os.environ["STACK_APP_GRPC_ENDPOINT"], insecure=True)))
    trace.set_tracer_provider(provider)


def main(stack: str) -> int:
    workdir = Path(os.environ.get("STACK_APP_WORKDIR", "."))
    db = None
    if stack == "agno":
        db = agno_stack(workdir)
    elif stack == "phoenix":
        phoenix_stack()
    elif stack == "batch-otlp":
        batch_otlp_stack()
    else:
        raise SystemExit(f"unknown stack {stack!r}")
    spec = importlib.util.spec_from_file_location("launcher_app", EXAMPLE)
    assert spec is not None and spec.loader is not None
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    app.main()
    report: dict[str, Any] = {"stack": stack}
    if db is not None:
        spans = db.get_spans()
        report["stack_spans"] = len(spans)
        report["stack_tripped"] = sum(1 for s in spans if (s.attributes or {}).get("spanbreaker.tripped") is True)
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
