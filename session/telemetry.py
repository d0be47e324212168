"""Traces of episodes, turns and LLM calls over OpenTelemetry (OTLP over HTTP), `[tool.zorkgpt.telemetry]`.

Where they go: the endpoint this section names, else the standard variables (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
`OTEL_EXPORTER_OTLP_ENDPOINT`, with `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_SERVICE_NAME`). With neither, nothing is
traced and OpenTelemetry is never imported: every span below is a shared object that does nothing. The SDK itself is
the `telemetry` extra (`uv sync --extra telemetry`) and lives in session/telemetry_export.py, imported only once an
endpoint is configured.

What is sent never holds the API key, and holds prompt and reply text only with `capture_content`. An endpoint that
is down or slow costs an episode nothing: spans wait in a bounded queue for a thread of their own, which gives up
on a request after `export_timeout_seconds`; spans that find the queue full or whose request failed are dropped and
counted (session/telemetry_export.py).

The settings are session/telemetry_settings.py's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

from session.telemetry_settings import Destination, TelemetryConfig, destination


# -- spans, whether anything is traced or not -----------------------------------------------------------------------
class Span(Protocol):
    """One open span: what the code that made it adds to it before it ends."""

    def set(self, attributes: Mapping[str, Any]) -> None:
        """Add attributes (None values left out, a mapping or a mixed list sent as JSON)."""

    def event(self, name: str, attributes: Mapping[str, Any]) -> None:
        """Add a span event."""

    def fail(self, error_type: str, message: str) -> None:
        """Mark the span failed: `error.type` and an error status with `message`."""

    def link(self) -> dict[str, str] | None:
        """This span's trace and span ids (hex), for another trace's span link; None when nothing is traced."""


class _NoSpan:
    """What every span is when nothing is traced: it does nothing, at the cost of a call."""

    def set(self, attributes: Mapping[str, Any]) -> None:
        pass

    def event(self, name: str, attributes: Mapping[str, Any]) -> None:
        pass

    def fail(self, error_type: str, message: str) -> None:
        pass

    def link(self) -> dict[str, str] | None:
        return None


NO_SPAN = _NoSpan()


class Exporting(Protocol):
    """This process's span pipeline (session.telemetry_export.Exporter)."""

    destination: Destination

    def span(self, name: str, attributes: Mapping[str, Any], root: bool, links: Sequence[dict[str, str]]) -> Any: ...

    def flush(self) -> None: ...

    def redact(self, secrets: Sequence[str | None]) -> None: ...

    def delivery(self) -> dict[str, int]: ...


_exporter: Exporting | None = None
"""This process's span pipeline, once `configure` found an endpoint."""
_links: ContextVar[tuple[dict[str, str], ...]] = ContextVar("zorkgpt_trace_links", default=())
"""Spans the next episode's trace links to (a batch's)."""


def configure(config: TelemetryConfig, secrets: Sequence[str | None] = ()) -> bool:
    """Make this process send spans where `config` and the environment say (once per destination: an episode after
    another keeps the pipeline), `secrets` (the API key) redacted from every text sent; whether anything is traced.
    ConfigError as `destination` raises it."""
    global _exporter
    where = destination(config)
    if where is None:
        _exporter = None
        return False
    if _exporter is None or _exporter.destination != where:
        from session.telemetry_export import exporter_for

        _exporter = exporter_for(where)
    _exporter.redact(secrets)
    return True


def tracing() -> bool:
    """Whether this process sends spans."""
    return _exporter is not None


def capture_content() -> bool:
    """Whether the LLM call spans carry the prompts and replies."""
    return _exporter is not None and _exporter.destination.capture_content


@contextmanager
def span(name: str, attributes: Mapping[str, Any], root: bool = False) -> Iterator[Span]:
    """A span named `name`, the current one inside the block (the parent of the spans begun there), ended when the
    block ends (failed when it raises). `root`: it begins a trace of its own, linked to the spans `linked_to` names.
    NO_SPAN when nothing is traced."""
    exporting = _exporter
    if exporting is None:
        yield NO_SPAN
        return
    links = _links.get() if root else ()
    if links:  # beside the link itself, for the receivers that keep no links (Phoenix)
        attributes = {**attributes, "zorkgpt.linked_trace_id": links[0]["trace_id"]}
    with exporting.span(name, attributes, root, links) as opened:
        yield opened


@contextmanager
def linked_to(link: dict[str, str] | None) -> Iterator[None]:
    """The traces begun inside the block (an episode's) link to `link` (a batch's span: `Span.link()`)."""
    token = _links.set((link,) if link else ())
    try:
        yield
    finally:
        _links.reset(token)


def delivery() -> dict[str, int] | None:
    """Spans this process sent, dropped (the queue full), failed (refused, or not answered in time) and still queued;
    None when it traces nothing."""
    return _exporter.delivery() if _exporter is not None else None


def flush() -> None:
    """Send the spans queued now, for at most `export_timeout_seconds` (at once when the receiver failed last)."""
    if _exporter is not None:
        _exporter.flush()
