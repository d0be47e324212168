"""Traces of an episode (session/telemetry.py) sent to a receiver on 127.0.0.1 that decodes what it is sent: the tree
(one trace, a span per turn, the LLM calls below their turn), the GenAI attributes, tokens and cost that add up to
summary.json's, the loop break's events on the turns; a receiver that is down or hangs changes neither records nor
summary; no API key and, unless asked, no prompt or reply text in anything sent; no OpenTelemetry import when no
endpoint is configured; a bad endpoint is one error line. Phoenix as the receiver: test_telemetry_phoenix.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

import main
from agents.llm_client import LLMClient
from agents.scripted_llm import send_json
from batch import runner
from playthroughs.receivers import hanging_endpoint
from session import telemetry
from session.telemetry_settings import TelemetryConfig
from tests.helpers import ROOT, make_config
from tests.local_http import bypass_proxies, closed_port, serving
from tests.otlp import MODEL, SECRET, THOUGHT, llm_episode, otlp_receiver

OTEL_VARIABLES = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_SERVICE_NAME",
    "OTEL_SDK_DISABLED",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
)


def _clean_environment(patch: pytest.MonkeyPatch) -> None:
    """No OpenTelemetry variable of the machine's, no proxy for 127.0.0.1, the tests' API key."""
    for name in OTEL_VARIABLES:
        patch.delenv(name, raising=False)
    bypass_proxies(patch)
    patch.setenv("OPENAI_API_KEY", SECRET)


@pytest.fixture(autouse=True)
def traced_here(monkeypatch):
    """The test's environment (`_clean_environment`); after it, this process traces nothing (the next test's
    episodes must not send to this test's receiver)."""
    _clean_environment(monkeypatch)
    yield
    telemetry.configure(TelemetryConfig(enabled=False))


def test_an_llm_path_episode_is_traced_whole_and_without_secrets(rom_path, walkthrough, tmp_path):
    """The looping LLM-path episode of 30 turns, traced to a receiver on 127.0.0.1 (one episode for every check: a
    module fixture would be played again on each worker)."""
    with otlp_receiver() as (endpoint, received):
        played = llm_episode(rom_path, walkthrough, tmp_path, {"endpoint": endpoint, "export_timeout_seconds": 30.0})
    traced = played, received
    _an_episode_is_one_trace_with_a_span_per_turn_and_one_per_llm_call(traced)
    _the_episode_span_says_what_was_played_and_what_it_came_to(traced)
    _llm_spans_follow_the_genai_conventions_and_add_up_to_the_summary(traced)
    _the_turns_carry_the_loop_breaks_warnings_and_penalties(traced)
    _no_api_key_and_no_prompt_or_reply_text_is_sent(traced)


def _an_episode_is_one_trace_with_a_span_per_turn_and_one_per_llm_call(traced) -> None:
    played, received = traced
    summary = played.summary
    [episode] = received.named("episode ")
    turns = received.named("turn ")
    calls = received.named("chat ")
    assert {span.trace_id for span in received.spans} == {episode.trace_id}
    assert episode.parent_id == "" and episode.resource["service.name"] == "zorkgpt"
    assert len(turns) == summary["turns"] == 30
    assert all(turn.parent_id == episode.span_id for turn in turns)
    assert sorted(turn.attributes["zorkgpt.turn"] for turn in turns) == list(range(1, 31))
    turn_ids = {turn.span_id for turn in turns}
    assert all(call.parent_id in turn_ids for call in calls)  # the episode-end notes: none without a store
    assert len(calls) == sum(summary["llm_calls"].values())
    by_turn = {turn.attributes["zorkgpt.turn"]: turn for turn in turns}
    for record in played.records:
        span = by_turn[record["turn"]]
        assert span.attributes["zorkgpt.command"] == record["command"]
        assert span.attributes["zorkgpt.room"] == record["room_name_before"]
        assert span.attributes["zorkgpt.score"] == record["score_after"]
        assert [name for name, _ in span.events] == [event["event_type"] for event in record["events"]]
        assert sum(1 for call in calls if call.parent_id == span.span_id) == sum(record["llm_calls"].values())


def _the_episode_span_says_what_was_played_and_what_it_came_to(traced) -> None:
    played, received = traced
    summary = played.summary
    [episode] = received.named("episode ")
    attributes = episode.attributes
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert (attributes["zorkgpt.game"], attributes["zorkgpt.agent"], attributes["zorkgpt.critic"]) == (
        "zork1",
        "llm",
        "llm",
    )
    assert attributes["zorkgpt.agent_model"] == attributes["zorkgpt.critic_model"] == MODEL
    assert len(attributes["zorkgpt.config_hash"]) == 12
    assert attributes["zorkgpt.score"] == summary["final_score"]
    assert attributes["zorkgpt.ending"] == summary["termination_reason"] == "max_turns"
    assert attributes["zorkgpt.turns"] == 30
    assert attributes["zorkgpt.cost_usd"] == summary["cost_usd"]["total"]


def _llm_spans_follow_the_genai_conventions_and_add_up_to_the_summary(traced) -> None:
    played, received = traced
    summary = played.summary
    calls = received.named("chat ")
    for call in calls:
        attributes = call.attributes
        assert call.name == f"chat {MODEL}"
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.request.model"] == attributes["gen_ai.response.model"] == MODEL
        assert attributes["gen_ai.response.finish_reasons"] == ["stop"]
        assert attributes["zorkgpt.role"] in ("agent", "critic", "objectives")
        assert attributes["zorkgpt.llm.retries"] == 0
    tokens = summary["token_details"]
    for role in ("agent", "critic"):
        mine = [call.attributes for call in calls if call.attributes["zorkgpt.usage_role"] == role]
        assert len(mine) == summary["llm_calls"][role]
        assert sum(a["gen_ai.usage.input_tokens"] for a in mine) == tokens[role]["prompt"]
        assert sum(a["gen_ai.usage.output_tokens"] for a in mine) == tokens[role]["completion"]
        assert sum(a["zorkgpt.cost_usd"] for a in mine) == pytest.approx(summary["cost_usd"][role], abs=1e-6)
    assert sum(call.attributes["zorkgpt.cost_usd"] for call in calls) == pytest.approx(
        summary["cost_usd"]["total"], abs=1e-6
    )
    assert {call.attributes["zorkgpt.role"] for call in calls} == {"agent", "critic", "objectives"}


def _the_turns_carry_the_loop_breaks_warnings_and_penalties(traced) -> None:
    _, received = traced
    events = {name for turn in received.named("turn ") for name, _ in turn.events}
    assert {"loop_break_warning", "loop_penalty_applied", "progress_check"} <= events
    warned = [turn for turn in received.named("turn ") if any(n == "loop_break_warning" for n, _ in turn.events)]
    assert warned and all(turn.attributes["zorkgpt.progressed"] is False for turn in warned)


def _no_api_key_and_no_prompt_or_reply_text_is_sent(traced) -> None:
    played, received = traced
    sent = b"".join(received.bodies)
    assert SECRET.encode() not in sent
    assert THOUGHT.encode() not in sent and played.prompt.encode() not in sent
    assert not any("gen_ai.input.messages" in span.attributes for span in received.spans)
    assert all("authorization" not in {k.lower() for k in headers} for headers in received.headers)


def test_prompts_and_replies_are_sent_when_asked_for_and_the_key_never(rom_path, walkthrough, tmp_path):
    with otlp_receiver() as (endpoint, received):
        played = llm_episode(
            rom_path,
            walkthrough,
            tmp_path,
            {"endpoint": endpoint, "capture_content": True, "export_timeout_seconds": 30.0},
            3,
        )
    sent = b"".join(received.bodies)
    assert THOUGHT.encode() in sent and SECRET.encode() not in sent
    agent_calls = [c for c in received.named("chat ") if c.attributes["zorkgpt.role"] == "agent"]
    said = json.loads(agent_calls[0].attributes["gen_ai.output.messages"])[0]["parts"][0]["content"]
    assert json.loads(said)["thought"].startswith(THOUGHT) and "[redacted]" in said
    assert played.summary["turns"] == 3


def _comparable(played) -> tuple[dict, list[dict]]:
    """The summary and records less what differs from run to run (ids, clocks)."""
    summary = {k: v for k, v in played.summary.items() if k not in ("episode_id", "wall_seconds")}
    records = [{k: v for k, v in record.items() if k != "wall_seconds"} for record in played.records]
    return summary, records


@pytest.mark.slow  # three episodes on the LLM path
def test_a_receiver_that_is_down_or_hangs_changes_nothing_in_the_records(rom_path, walkthrough, tmp_path):
    untraced = llm_episode(rom_path, walkthrough, tmp_path / "none", {}, 8)
    refused = {"endpoint": f"http://127.0.0.1:{closed_port()}"}
    down = llm_episode(rom_path, walkthrough, tmp_path / "down", refused, 8, flush=False)
    with hanging_endpoint() as endpoint:
        hanging = llm_episode(rom_path, walkthrough, tmp_path / "hanging", {"endpoint": endpoint}, 8, flush=False)
    assert _comparable(down) == _comparable(untraced) == _comparable(hanging)
    assert untraced.summary["turns"] == 8 and sum(untraced.summary["llm_calls"].values()) >= 16


@pytest.mark.slow  # a process of its own
def test_without_an_endpoint_opentelemetry_is_never_imported(rom_path, tmp_path):
    script = (
        "import sys\n"
        "import main\n"
        f"code = main.main(['--rom', {str(rom_path)!r}, '--episode-dir', {str(tmp_path)!r}, '--max-turns', '3',"
        " '--quiet', '--no-knowledge'])\n"
        "print(code, sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and k != "OPENAI_API_KEY"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stderr


@pytest.mark.parametrize(
    "where, value, words",
    [
        ("config", "ftp://127.0.0.1:6006", ["tool.zorkgpt.telemetry.endpoint", "http://"]),
        ("config", "http://user:secret@127.0.0.1:6006", ["credentials", "OTEL_EXPORTER_OTLP_HEADERS"]),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:secret@127.0.0.1:6006", ["credentials", "***@127.0.0.1"]),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "127.0.0.1:6006", ["OTEL_EXPORTER_OTLP_ENDPOINT", "http://"]),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", ["OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "http/protobuf"]),
    ],
)
def test_a_bad_endpoint_is_one_error_line(tmp_path, rom_path, capsys, monkeypatch, where, value, words):
    config = tmp_path / "pyproject.toml"
    table = f'[tool.zorkgpt.telemetry]\nendpoint = "{value}"\n' if where == "config" else ""
    config.write_text(table)
    if where != "config":
        monkeypatch.setenv(where, value)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", value if "ENDPOINT" in where else "http://127.0.0.1:9")
    argv = ["--rom", str(rom_path), "--config", str(config), "--episode-dir", str(tmp_path / "e"), "--max-turns", "2"]
    code = main.main([*argv, "--quiet", "--no-knowledge"])
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert code == main.EXIT_USAGE and len(lines) == 1 and lines[0].startswith("error: "), err
    assert all(word in lines[0] for word in words), lines[0]
    assert "secret" not in err  # a password in the URL is never printed


@pytest.mark.slow  # worker processes
def test_a_batch_of_two_jobs_sends_two_traces_linked_to_the_batchs_span(rom_path, tmp_path, monkeypatch):
    with otlp_receiver() as (endpoint, received):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)  # as the workers read it, from the environment
        config = tmp_path / "pyproject.toml"
        config.write_text("[tool.zorkgpt.telemetry]\nexport_timeout_seconds = 30.0\n")
        assert runner.main(_batch_flags(rom_path, tmp_path / "batch", config)) == 0
        spans = list(received.spans)
    _assert_two_linked_traces(spans, "local")


@pytest.mark.slow  # a Ray instance
@pytest.mark.xdist_group("ray")  # one Ray cluster at a time on the machine
def test_ray_tasks_send_their_episodes_traces_linked_to_the_batchs_span(rom_path, tmp_path):
    pytest.importorskip("ray", reason="the ray extra is not installed (uv sync --extra ray; .ci/run installs it)")
    with otlp_receiver() as (endpoint, received):
        config = tmp_path / "pyproject.toml"  # a cluster's nodes have the batch's configuration, not its environment
        config.write_text(f'[tool.zorkgpt.telemetry]\nendpoint = "{endpoint}"\nexport_timeout_seconds = 30.0\n')
        assert runner.main([*_batch_flags(rom_path, tmp_path / "batch", config), "--backend", "ray"]) == 0
        spans = list(received.spans)
    _assert_two_linked_traces(spans, "ray")


def _batch_flags(rom_path: Path, out: Path, config: Path) -> list[str]:
    """zork1 on seeds 1 and 2, two workers, 4 turns each of the offline agent and critic."""
    flags = ["--games", str(rom_path), "--seeds", "1,2", "--workers", "2", "--max-turns", "4", "--quiet"]
    return [*flags, "--agent", "offline", "--critic", "offline", "--out", str(out), "--config", str(config)]


def _assert_two_linked_traces(spans: list, backend: str) -> None:
    [batch] = [span for span in spans if span.name.startswith("batch ")]
    episodes = [span for span in spans if span.name.startswith("episode ")]
    assert len(episodes) == 2 and len({span.trace_id for span in episodes} | {batch.trace_id}) == 3
    assert all(span.links == [(batch.trace_id, batch.span_id)] for span in episodes)
    assert len([span for span in spans if span.name.startswith("turn ")]) == 8
    assert batch.attributes["zorkgpt.batch.jobs"] == 2 and batch.attributes["zorkgpt.batch.backend"] == backend


def test_the_receivers_headers_go_with_each_request_and_nowhere_else(rom_path, walkthrough, tmp_path, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-receiver-key=rk-secret-42")
    with otlp_receiver() as (endpoint, received):
        played = llm_episode(rom_path, walkthrough, tmp_path, {"endpoint": endpoint, "export_timeout_seconds": 30.0}, 2)
    assert received.headers and all(h.get("x-receiver-key") == "rk-secret-42" for h in received.headers)
    assert b"rk-secret-42" not in b"".join(received.bodies)
    assert not [f for f in played.folder.iterdir() if f.is_file() and "rk-secret-42" in f.read_text(errors="replace")]


REPLY = '{"thought": "t", "command": "look"}'


def test_an_llm_calls_span_counts_the_clients_own_retries(tmp_path):
    """A server that answers 503 once, then the completion: one call, one retry of the openai client's, on its span."""
    answers = iter([503])

    class Flaky(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            status = next(answers, 200)
            if status != 200:
                send_json(self, status, {"error": {"message": "busy", "type": "server_error"}})
                return
            message = {"role": "assistant", "content": REPLY}
            usage = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            send_json(
                self,
                200,
                {
                    "id": "c1",
                    "object": "chat.completion",
                    "created": 1,
                    "model": body["model"],
                    "choices": [choice],
                    "usage": usage,
                },
            )

        def log_message(self, *args) -> None:
            pass

    with otlp_receiver() as (endpoint, received), serving(Flaky) as server:
        config = make_config(
            tmp_path,
            llm={"base_url": f"http://127.0.0.1:{server.server_address[1]}/v1", "max_retries": 1},
            telemetry={"endpoint": endpoint, "export_timeout_seconds": 30.0},
        )
        telemetry.configure(config.telemetry, (SECRET,))
        client = LLMClient(config.llm, SECRET, 3)
        assert client.chat("agent", MODEL, [{"role": "user", "content": "go"}], 0.7, 50) == REPLY
        telemetry.flush()
    [call] = received.named("chat ")
    assert call.attributes["zorkgpt.llm.retries"] == 1 and call.attributes["gen_ai.usage.input_tokens"] == 12
    assert client.usage.calls["agent"] == 1
