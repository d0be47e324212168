"""The settings of traces, `[tool.zorkgpt.telemetry]`, and where they resolve to with the standard OpenTelemetry
variables (`Destination`). Registered as a section of the configuration when imported (session.config.BUILT_IN_MODULES
imports it by name); session/telemetry.py makes the spans."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from session.config import ConfigError, GameConfiguration, Section
from session.config_loading import without_credentials

TRACES_PATH = "/v1/traces"
"""Where an OTLP/HTTP receiver takes spans, below its base endpoint."""
DEFAULT_SERVICE_NAME = "zorkgpt"
ENDPOINT_VARIABLE = "OTEL_EXPORTER_OTLP_ENDPOINT"
TRACES_ENDPOINT_VARIABLE = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
"""The standard variables: a base endpoint (`/v1/traces` is added), or the traces URL itself (used as it is)."""
SERVICE_NAME_VARIABLE = "OTEL_SERVICE_NAME"
PROTOCOL_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
SDK_DISABLED_VARIABLE = "OTEL_SDK_DISABLED"
CAPTURE_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI instrumentations' switch for prompt and reply text, read as `capture_content = true` when "true"."""
HTTP_PROTOBUF = "http/protobuf"


def endpoint_problem(url: str) -> str | None:
    """Why `url` is no OTLP/HTTP endpoint (None when it is one): an http(s) URL with a host, a valid port, and no
    credentials in it (they would be written with the configuration; they go in OTEL_EXPORTER_OTLP_HEADERS)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "an http:// or https:// URL with a host, e.g. http://127.0.0.1:6006"
    if parts.username is not None or parts.password is not None:
        return "credentials do not belong in the URL: put them in OTEL_EXPORTER_OTLP_HEADERS"
    if port == 0:
        return "port 0 is no port"
    return None


class TelemetryConfig(Section):
    """`[tool.zorkgpt.telemetry]`: OpenTelemetry traces of every episode, turn and LLM call, sent over OTLP/HTTP."""

    enabled: bool = True
    """Send traces when an endpoint is set (here, or in the standard variables). False: never, whatever the
    environment says."""
    endpoint: str | None = None
    """The receiver's OTLP/HTTP base URL: spans go to `<endpoint>/v1/traces` (Phoenix: `http://127.0.0.1:6006`,
    Jaeger and the OpenTelemetry Collector: `http://127.0.0.1:4318`). None: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the
    traces URL itself) or `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL); neither set: no traces, and OpenTelemetry is
    never imported. Headers (an API key of the receiver) only ever come from `OTEL_EXPORTER_OTLP_HEADERS`."""
    service_name: str | None = Field(None, min_length=1, max_length=200)
    """The traces' `service.name` (and Phoenix's project). None: `OTEL_SERVICE_NAME`, else `zorkgpt`."""
    capture_content: bool = False
    """Put the prompts and replies in the LLM call spans (`gen_ai.input.messages`, `gen_ai.output.messages`, the API
    key redacted). Off: no prompt or reply text is sent. `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`
    turns it on too."""
    export_timeout_seconds: float = Field(2.0, gt=0.0, le=60.0)
    """The longest one request to the receiver may take, retries included; its spans are dropped after it. Spans are
    sent from a thread of their own, so a slow receiver never holds up a turn; at the end of a process (or of a
    batch's job) the spans still queued are given this long to go."""
    max_queue_spans: int = Field(4096, ge=16, le=1_000_000)
    """Spans waiting to be sent, at most: a span that finds the queue full is dropped (and counted)."""
    batch_spans: int = Field(256, ge=1, le=100_000)
    """Spans sent in one request, at most."""
    send_interval_seconds: float = Field(1.0, gt=0.0, le=600.0)
    """How often the spans queued are sent (sooner when a request's worth is waiting)."""

    @field_validator("endpoint")
    @classmethod
    def _an_endpoint(cls, value: str | None) -> str | None:
        if value is not None and (problem := endpoint_problem(value)) is not None:
            raise ValueError(problem)
        return value


GameConfiguration.register_section("telemetry", TelemetryConfig)


@dataclass(frozen=True)
class Destination:
    """Where and how this process sends its spans, resolved from the configuration and the environment."""

    traces_url: str
    service_name: str
    capture_content: bool
    export_timeout_seconds: float
    max_queue_spans: int
    batch_spans: int
    send_interval_seconds: float


def destination(config: TelemetryConfig, environ: Mapping[str, str] | None = None) -> Destination | None:
    """Where spans go under `config` and the environment; None when nothing is to be traced. A ConfigError in one
    line for an endpoint that is no URL, a protocol other than http/protobuf, or a missing `telemetry` extra."""
    env = os.environ if environ is None else environ
    if not config.enabled or env.get(SDK_DISABLED_VARIABLE, "").strip().lower() == "true":
        return None
    if config.endpoint is not None:
        url, source = config.endpoint.rstrip("/") + TRACES_PATH, "tool.zorkgpt.telemetry.endpoint"
    elif env.get(TRACES_ENDPOINT_VARIABLE, "").strip():
        url, source = env[TRACES_ENDPOINT_VARIABLE].strip(), TRACES_ENDPOINT_VARIABLE
    elif env.get(ENDPOINT_VARIABLE, "").strip():
        url, source = env[ENDPOINT_VARIABLE].strip().rstrip("/") + TRACES_PATH, ENDPOINT_VARIABLE
    else:
        return None
    if (problem := endpoint_problem(url)) is not None:
        raise ConfigError(f"{source} {without_credentials(url)!r}: {problem}")
    for variable in PROTOCOL_VARIABLES:
        protocol = env.get(variable, "").strip()
        if protocol and protocol != HTTP_PROTOBUF:
            raise ConfigError(f"{variable}={protocol}: traces are sent as {HTTP_PROTOBUF} only (unset it)")
    if importlib.util.find_spec("opentelemetry.sdk") is None:
        raise ConfigError(f"traces to {url} need the telemetry extra: uv sync --extra telemetry")
    service = config.service_name or env.get(SERVICE_NAME_VARIABLE, "").strip() or DEFAULT_SERVICE_NAME
    capture = config.capture_content or env.get(CAPTURE_VARIABLE, "").strip().lower() == "true"
    return Destination(
        url,
        service,
        capture,
        config.export_timeout_seconds,
        config.max_queue_spans,
        config.batch_spans,
        config.send_interval_seconds,
    )
