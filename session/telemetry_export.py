"""The OpenTelemetry SDK's side of session/telemetry.py, imported only once an endpoint is configured: this process's
tracer provider, and a span processor that never makes the code that ends a span wait.

The SDK's own batch processor drops the oldest span without counting it when its queue is full, and waits on a
receiver that hangs as long as its timeout at every flush. `BoundedExport` keeps a bounded queue (a span that finds
it full is dropped and counted), sends from a daemon thread with the exporter's timeout (a failed request's spans
are dropped and counted, and so are those that come in the RETRY_SECONDS after it, unencoded), flushes without
waiting once the receiver has failed, and gives the spans left at the end of the process `export_timeout_seconds`
to go. What it could not send is said in one warning line.
"""

from __future__ import annotations

import atexit
import json
import logging
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from loguru import logger
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Link, SpanContext, Status, StatusCode, TraceFlags

from session.safe_text import encodable, redact
from session.telemetry_settings import Destination

TRACER_NAME = "zorkgpt"
RETRY_SECONDS = 10.0
"""After a request the receiver refused or did not answer in time, how long the spans that come are dropped before
the next request tries it again."""
PHOENIX_PROJECT = "openinference.project.name"
"""The resource attribute Phoenix files traces under (its project): the service name."""


class BoundedExport(SpanProcessor):
    """Ended spans queued (at most `max_queue_spans`) and sent in batches from a daemon thread; what could not be
    queued or sent is counted, never waited for."""

    def __init__(self, exporter: SpanExporter, where: Destination):
        self.exporter = exporter
        self.where = where
        self.queue: deque[ReadableSpan] = deque()
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.idle = threading.Event()
        self.idle.set()
        self.stopping = False
        self.exported = 0
        self.dropped = 0
        """Spans that found the queue full."""
        self.failed = 0
        """Spans whose request the receiver refused, or did not answer in time."""
        self.failing = False
        """The last request failed: a flush does not wait for the next, and the spans that reach the sender before
        `next_try` are dropped without a request."""
        self.next_try = 0.0
        self.thread = threading.Thread(target=self._run, name="zorkgpt-telemetry", daemon=True)
        self.thread.start()

    def on_start(self, span, parent_context=None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        with self.lock:
            if len(self.queue) >= self.where.max_queue_spans:
                self.dropped += 1
                return
            self.queue.append(span)
            self.idle.clear()
            full = len(self.queue) >= self.where.batch_spans
        if full:
            self.wake.set()

    def _run(self) -> None:
        while not self.stopping:
            self.wake.wait(self.where.send_interval_seconds)
            self.wake.clear()
            self._send_queued()

    def _send_queued(self) -> None:
        while True:
            with self.lock:
                batch = [self.queue.popleft() for _ in range(min(len(self.queue), self.where.batch_spans))]
                if not batch:
                    self.idle.set()
                    return
            if self.failing and time.monotonic() < self.next_try:
                self.failed += len(batch)  # dropped unencoded: encoding them for a receiver that fails costs play
                continue
            self._send(batch)

    def _send(self, batch: list[ReadableSpan]) -> None:
        try:
            ok = self.exporter.export(batch) == SpanExportResult.SUCCESS
        except Exception:  # noqa: BLE001 - the receiver's trouble is counted, never raised into play
            ok = False
        if ok:
            self.exported += len(batch)
            if self.failing:
                logger.info(f"telemetry: {self.where.traces_url} takes spans again")
            self.failing = False
            return
        self.failed += len(batch)
        self.next_try = time.monotonic() + RETRY_SECONDS
        if not self.failing:
            logger.warning(
                f"telemetry: {self.where.traces_url} did not take {len(batch)} spans within "
                f"{self.where.export_timeout_seconds:g} s: they are dropped, and so are the next ones it does not take"
            )
        self.failing = True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Wake the sender and wait until the queue is sent, at most `timeout_millis`; at once when the receiver
        failed last (it is not waited for again)."""
        if self.failing:
            return False
        self.wake.set()
        return self.idle.wait(timeout_millis / 1000)

    def shutdown(self) -> None:
        """Send what is queued, for at most the export timeout, then stop; say what was not delivered."""
        self.force_flush(int(self.where.export_timeout_seconds * 1000))
        self.stopping = True
        self.wake.set()
        self.thread.join(self.where.export_timeout_seconds)
        with self.lock:
            left = len(self.queue)
        lost = self.dropped + self.failed + left
        if lost:  # at the end of a process, when the episode's log is closed: straight to the console
            print(
                f"telemetry: {lost} spans not delivered to {self.where.traces_url} ({self.dropped} found the queue "
                f"full, {self.failed} were refused or timed out, {left} still queued at the end); {self.exported} sent",
                file=sys.stderr,
            )


class _OpenSpan:
    """session.telemetry.Span over an SDK span."""

    def __init__(self, span: trace.Span):
        self.span = span

    def set(self, attributes: Mapping[str, Any]) -> None:
        self.span.set_attributes(clean_attributes(attributes))

    def event(self, name: str, attributes: Mapping[str, Any]) -> None:
        self.span.add_event(name, clean_attributes(attributes))

    def fail(self, error_type: str, message: str) -> None:
        self.span.set_attribute("error.type", safe_text(error_type))
        self.span.set_status(Status(StatusCode.ERROR, safe_text(message)))

    def link(self) -> dict[str, str] | None:
        context = self.span.get_span_context()
        return {"trace_id": format(context.trace_id, "032x"), "span_id": format(context.span_id, "016x")}


class Exporter:
    """This process's tracer provider and its processor, for one destination."""

    def __init__(self, where: Destination):
        self.destination = where
        for name in ("opentelemetry.exporter", "opentelemetry.sdk.trace"):
            # Their lines for a receiver that is down would repeat every request; BoundedExport says it once.
            logging.getLogger(name).setLevel(logging.CRITICAL)
        resource = Resource.create({"service.name": where.service_name, PHOENIX_PROJECT: where.service_name})
        self.provider = TracerProvider(resource=resource)
        exporter = OTLPSpanExporter(endpoint=where.traces_url, timeout=where.export_timeout_seconds)
        self.processor = BoundedExport(exporter, where)
        self.provider.add_span_processor(self.processor)
        self.tracer = self.provider.get_tracer(TRACER_NAME)
        atexit.register(self.shutdown)

    @contextmanager
    def span(
        self, name: str, attributes: Mapping[str, Any], root: bool, links: Sequence[dict[str, str]]
    ) -> Iterator[_OpenSpan]:
        parent = otel_context.Context() if root else None
        started = self.tracer.start_span(
            name, context=parent, attributes=clean_attributes(attributes), links=[_link(each) for each in links]
        )
        with trace.use_span(started, end_on_exit=True, record_exception=False, set_status_on_exception=False):
            opened = _OpenSpan(started)
            try:
                yield opened
            except BaseException as exc:
                opened.fail(type(exc).__name__, _first_line(str(exc)))
                raise

    def flush(self) -> None:
        self.processor.force_flush(int(self.destination.export_timeout_seconds * 1000))

    def shutdown(self) -> None:
        self.provider.shutdown()

    def delivery(self) -> dict[str, int]:
        processor = self.processor
        with processor.lock:
            queued = len(processor.queue)
        return {"sent": processor.exported, "dropped": processor.dropped, "failed": processor.failed, "queued": queued}

    def redact(self, secrets: Sequence[str | None]) -> None:
        """Never send `secrets` (the API key), in any span of this process."""
        _secrets.update(s for s in secrets if s)


def _link(ids: dict[str, str]) -> Link:
    context = SpanContext(
        int(ids["trace_id"], 16), int(ids["span_id"], 16), is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED)
    )
    return Link(context, {"zorkgpt.link": "batch"})


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:300] if text.strip() else ""


_exporters: dict[Destination, Exporter] = {}
_secrets: set[str] = set()
"""Text never sent in a span (the API key): replaced wherever it appears (`clean_attributes`)."""


def clean_attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes OpenTelemetry takes: None left out, numbers, booleans, text and lists of one of them kept, anything
    else (a mapping, a mixed list) as JSON text; every text without the secrets and encodable as UTF-8 (a lone
    surrogate would fail the whole request's encoding)."""
    cleaned: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, (bool, int, float)):
            cleaned[key] = value
        elif isinstance(value, str):
            cleaned[key] = safe_text(value)
        elif isinstance(value, (list, tuple)) and _one_scalar_type(value):
            cleaned[key] = [safe_text(v) if isinstance(v, str) else v for v in value]
        else:
            cleaned[key] = safe_text(json.dumps(value, default=str, sort_keys=True))
    return cleaned


def safe_text(text: str) -> str:
    """`text` as a span may carry it: no secret, encodable as UTF-8. Most texts hold neither a secret nor a `Bearer`
    and are ASCII: they are looked at, not rewritten (every attribute of every span comes here)."""
    if any(secret in text for secret in _secrets) or "bearer" in text.lower():
        text = redact(text, _secrets)
    return text if text.isascii() else encodable(text)


def _one_scalar_type(values: Sequence[Any]) -> bool:
    kinds = {type(v) for v in values}
    return len(kinds) <= 1 and kinds <= {str, bool, int, float}


def exporter_for(where: Destination) -> Exporter:
    """The pipeline of `where`, made once per process."""
    if where not in _exporters:
        _exporters[where] = Exporter(where)
    return _exporters[where]
