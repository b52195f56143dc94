"""A real OTLP trace receiver on 127.0.0.1 for tests: OTLP/HTTP (protobuf or JSON, plain/gzip/deflate) and gRPC.

Why not mock the exporter: the question these tests answer is "does a tripped trace survive the wire", i.e.
whether the trip attributes, events and parent links are still there after the SDK's OTLP encoding, the
transport and protobuf decoding. Jaeger, Tempo and the Collector cannot run on these machines; this receiver
speaks the same protocol they do (``opentelemetry-proto`` messages, ``grpcio`` server).

Use the ``otlp_receiver`` pytest fixture, or run standalone: ``python tests/otlp_receiver.py 4318 4317``.
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value
    return getattr(value, kind) if kind else None


def _attributes(kvs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs if isinstance(kv, KeyValue)}


_HEX_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id"})


def _hex_ids_to_base64(obj: Any) -> Any:
    """OTLP/JSON carries ids as hex; protobuf's json_format expects base64 for ``bytes`` fields."""
    if isinstance(obj, dict):
        return {key: (base64.b64encode(bytes.fromhex(val)).decode()
                      if key in _HEX_ID_KEYS and isinstance(val, str) and val else _hex_ids_to_base64(val))
                for key, val in obj.items()}
    if isinstance(obj, list):
        return [_hex_ids_to_base64(item) for item in obj]
    return obj


@dataclass
class ReceivedSpan:
    transport: str
    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status_code: int
    status_message: str
    resource: dict[str, Any]
    scope: str


@dataclass
class SpanStore:
    """Every span received, in arrival order; ``wait_for`` blocks until a condition on them holds."""

    spans: list[ReceivedSpan] = field(default_factory=list)
    requests: int = 0
    _cv: threading.Condition = field(default_factory=threading.Condition)

    def add(self, request: trace_service_pb2.ExportTraceServiceRequest, transport: str) -> None:
        received = []
        for resource_spans in request.resource_spans:
            resource = _attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    received.append(ReceivedSpan(
                        transport=transport, trace_id=span.trace_id.hex(), span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex() or None, name=span.name,
                        attributes=_attributes(span.attributes),
                        events=[(event.name, _attributes(event.attributes)) for event in span.events],
                        status_code=span.status.code, status_message=span.status.message,
                        resource=resource, scope=scope_spans.scope.name,
                    ))
        with self._cv:
            self.requests += 1
            self.spans.extend(received)
            self._cv.notify_all()

    def wait_for(self, predicate: Callable[[list[ReceivedSpan]], bool], timeout: float = 15.0) -> list[ReceivedSpan]:
        deadline = time.monotonic() + timeout
        with self._cv:
            while not predicate(self.spans):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"condition not met; received {[s.name for s in self.spans]}")
                self._cv.wait(left)
            return list(self.spans)

    def clear(self) -> None:
        with self._cv:
            self.spans.clear()
            self.requests = 0


def start_http(store: SpanStore, host: str = "127.0.0.1", port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """Serve ``POST /v1/traces``; returns the server and its base URL (``OTEL_EXPORTER_OTLP_ENDPOINT`` form)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            if self.path.rstrip("/") != "/v1/traces":
                self.send_response(404)
                self.end_headers()
                return
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            encoding = (self.headers.get("Content-Encoding") or "").lower()
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding == "deflate":
                body = zlib.decompress(body)
            request = trace_service_pb2.ExportTraceServiceRequest()
            if (self.headers.get("Content-Type") or "").split(";")[0] == "application/json":
                json_format.ParseDict(_hex_ids_to_base64(json.loads(body)), request)
            else:
                request.ParseFromString(body)
            store.add(request, "http")
            reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

    server = ThreadingHTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, name="otlp-http-receiver", daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}"


def start_grpc(store: SpanStore, host: str = "127.0.0.1", port: int = 0) -> tuple[Any, str]:
    """Serve the OTLP TraceService over insecure gRPC; returns the server and its ``host:port`` endpoint."""
    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

    class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request: Any, context: Any) -> trace_service_pb2.ExportTraceServiceResponse:
            store.add(request, "grpc")
            return trace_service_pb2.ExportTraceServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(TraceService(), server)  # type: ignore[no-untyped-call]
    bound = server.add_insecure_port(f"{host}:{port}")
    server.start()
    return server, f"{host}:{bound}"


@dataclass
class Receiver:
    store: SpanStore
    http_endpoint: str
    """Base URL for the HTTP exporter (it appends ``/v1/traces`` when given as ``OTEL_EXPORTER_OTLP_ENDPOINT``)."""
    grpc_endpoint: str
    """``127.0.0.1:port`` for the gRPC exporter (insecure)."""

    @property
    def http_traces_url(self) -> str:
        return self.http_endpoint + "/v1/traces"


@pytest.fixture
def otlp_receiver() -> Iterator[Receiver]:
    store = SpanStore()
    http_server, http_endpoint = start_http(store)
    grpc_server, grpc_endpoint = start_grpc(store)
    try:
        yield Receiver(store, http_endpoint, grpc_endpoint)
    finally:
        http_server.shutdown()
        http_server.server_close()
        grpc_server.stop(grace=None)


if __name__ == "__main__":  # pragma: no cover - manual use
    import sys

    store = SpanStore()
    _, http_url = start_http(store, port=int(sys.argv[1]) if len(sys.argv) > 1 else 4318)
    _, grpc_url = start_grpc(store, port=int(sys.argv[2]) if len(sys.argv) > 2 else 4317)
    print("OTLP/HTTP", http_url, "OTLP/gRPC", grpc_url, flush=True)
    seen = 0
    while True:
        time.sleep(0.2)
        for span in store.spans[seen:]:
            print(json.dumps(span.__dict__, default=str), flush=True)
        seen = len(store.spans)
