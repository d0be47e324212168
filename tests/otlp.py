"""What the telemetry tests share: receivers of OTLP/HTTP traces on 127.0.0.1 (one that keeps every request, its raw
bytes and its spans decoded; one that takes connections and never answers) and an LLM-path episode of zork1 whose
agent loops, so that the loop break warns and penalises. Phoenix itself, the real receiver, is started by
tests/orchestration/test_telemetry_phoenix.py."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agents.scripted_llm import ScriptedServer, WalkthroughModel
from orchestration.orchestrator import Orchestrator
from orchestration.wiring import RunOptions, build_orchestrator
from session import telemetry as telemetry_module
from session.records import read_record_dicts, read_summary
from tests.helpers import make_config
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


# -- an LLM-path episode of zork1 that loops, for the telemetry tests --------------------------------------------------
WALKED_STEPS = 14
"""Walkthrough steps before the loop: they reach the Kitchen, where north and south are refused."""
LOOP = ["north", "south"]
"""Played in the Kitchen from turn 15: the loop break warns, penalises and rejects, and blocks at turn 30."""
MODEL = "gpt-4o-mini"
"""The scripted model's name: one the price table knows (and Phoenix, which prices the calls it shows)."""
SECRET = "sk-telemetry-test-0123456789abcdef"
"""The API key of these tests: the scripted model writes it into its thoughts, and no span may carry it."""
THOUGHT = "Next step of my plan"
"""How every reply of the scripted model begins (agents.scripted_llm.WalkthroughModel): reply text."""


def looping_model(walkthrough: list[str], turn: Callable[[], int]) -> Callable[[list[dict]], str]:
    """The walkthrough's first WALKED_STEPS steps, then LOOP for ever; each thought holds SECRET."""
    model = WalkthroughModel(walkthrough[:WALKED_STEPS] + LOOP * 40, turn)

    def reply(messages: list[dict]) -> str:
        answer = json.loads(model(messages))
        if "thought" in answer:
            answer["thought"] += f" (my key is {SECRET})"
        return json.dumps(answer)

    return reply


@dataclass
class TracedEpisode:
    summary: dict
    records: list[dict]
    folder: Path
    prompt: str
    """The start of the agent's last prompt: text no span may carry unless asked to."""


def llm_episode(
    rom_path: Path, walkthrough: list[str], tmp_path: Path, telemetry: dict, turns: int = 30, flush: bool = True
) -> TracedEpisode:
    """zork1 on the LLM path (the llm agent and critic against agents.scripted_llm.ScriptedServer on 127.0.0.1) for
    `turns` turns of `looping_model`, under `[tool.zorkgpt.telemetry]` = `telemetry`, as main.py builds it; the spans
    queued are sent before it returns (`flush`: a receiver that takes them is waited for)."""
    holder: dict[str, Orchestrator] = {}
    model = looping_model(walkthrough, lambda: holder["orchestrator"].game_state.turn_count + 1)
    with ScriptedServer(model) as server:
        config = make_config(
            tmp_path,
            gameplay={"agent": "llm", "critic": "llm", "max_turns_per_episode": turns},
            llm={"base_url": server.base_url, "agent_model": MODEL, "critic_model": MODEL, "max_retries": 0},
            knowledge={"enabled": False},
            telemetry=telemetry,
        )
        orchestrator = build_orchestrator(config, RunOptions(rom=str(rom_path), quiet=True), after_episode=())
        holder["orchestrator"] = orchestrator
        folder = orchestrator.play_episode().parent
        prompt = str(server.last_messages["agent"][-1]["content"])[:200]
    if flush:
        telemetry_module.flush()
    return TracedEpisode(read_summary(folder), read_record_dicts(folder), folder, prompt)
