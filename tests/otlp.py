"""Receivers of OTLP/HTTP traces on 127.0.0.1 for the telemetry tests: one that keeps every request (its raw bytes and
its spans, decoded), and one that takes connections and never answers. Phoenix itself, the real receiver, is started
by tests/orchestration/test_telemetry_phoenix.py."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.local_http import serving


@dataclass
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    links: list[tuple[str, str]]
    """(trace id, span id) of each span linked to."""
    status: int
    """0 unset, 1 ok, 2 error."""
    resource: dict[str, Any]


@dataclass
class Received:
    """What a receiver was sent: every request's body, and its spans."""

    bodies: list[bytes] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    spans: list[ReceivedSpan] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def named(self, prefix: str) -> list[ReceivedSpan]:
        with self.lock:
            return [span for span in self.spans if span.name.startswith(prefix)]


def _value(value) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    if kind is None:
        return None
    return getattr(value, kind)


def _attributes(pairs) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


def decode(body: bytes) -> list[ReceivedSpan]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope in resource_spans.scope_spans:
            for span in scope.spans:
                spans.append(
                    ReceivedSpan(
                        span.name,
                        span.trace_id.hex(),
                        span.span_id.hex(),
                        span.parent_span_id.hex(),
                        _attributes(span.attributes),
                        [(event.name, _attributes(event.attributes)) for event in span.events],
                        [(link.trace_id.hex(), link.span_id.hex()) for link in span.links],
                        span.status.code,
                        resource,
                    )
                )
    return spans


@contextmanager
def otlp_receiver() -> Iterator[tuple[str, Received]]:
    """(base endpoint, what it received) of an OTLP/HTTP receiver on a free port of 127.0.0.1."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with received.lock:
                received.bodies.append(body)
                received.headers.append(dict(self.headers))
                received.spans.extend(decode(body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    with serving(Handler) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", received


@contextmanager
def hanging_receiver() -> Iterator[str]:
    """The base endpoint of a socket on 127.0.0.1 that accepts every connection and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        for connection in held:
            connection.close()
        listener.close()
