"""Traces read back from a real receiver: Arize Phoenix, started here on 127.0.0.1 (free ports, its database in the
test's folder, nothing of it reaching further than this machine), fed through `OTEL_EXPORTER_OTLP_ENDPOINT` as a user
would. An LLM-path zork1 episode of 30 turns is one trace there (a span per turn carrying the loop break's events, a
span per LLM call with its model, tokens and finish reason, the sums equal to summary.json's); a batch of two jobs on
local workers is two traces linked to the batch's; and the episode's trace, as Phoenix draws it, is the picture in
docs/telemetry.md. The same spans as a receiver that decodes them sees them: test_telemetry.py."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from batch import runner
from session import telemetry
from session.telemetry_settings import TelemetryConfig
from tests.local_http import bypass_proxies
from tests.otlp import MODEL, SECRET, llm_episode

pytestmark = pytest.mark.slow  # Phoenix takes a minute to start: one test reads everything back from one Phoenix

START_SECONDS = 300.0
"""How long Phoenix may take to answer once started (its imports and database migrations: about a minute here)."""
PICTURE_VARIABLE = "ZORKGPT_PHOENIX_PICTURE"
"""Where the test also keeps the trace's picture when set (docs/telemetry-phoenix.png is made so); unset, the picture
stays in the test's own folder and the tree is left as it was."""
PHOENIX_SETTINGS = {
    "PHOENIX_HOST": "127.0.0.1",
    "PHOENIX_TELEMETRY_ENABLED": "false",
    "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
    "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    "PHOENIX_AGENTS_DISABLE_WEB_ACCESS": "true",
}
"""Phoenix on 127.0.0.1 only, asking nothing of the outside world (its usage reports, its assistant's sources)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())


@pytest.fixture
def phoenix(tmp_path) -> str:
    """Phoenix's base URL, started for the test and stopped after it."""
    folder = tmp_path / "phoenix"
    folder.mkdir()
    port = _free_port()
    env = {
        **os.environ,
        **PHOENIX_SETTINGS,
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
        "PHOENIX_WORKING_DIR": str(folder),
        "NO_PROXY": "127.0.0.1,localhost",
    }
    log = (folder / "phoenix.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "phoenix.server.main", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_SECONDS
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(f"Phoenix exited ({process.returncode}): {(folder / 'phoenix.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"Phoenix did not answer within {START_SECONDS:.0f} s", pytrace=False)
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def read_spans(phoenix: str, project: str, count: int) -> list[dict]:
    """The project's spans once Phoenix has stored `count` of them (it takes them in the background), page by page
    (its REST API's pages hold 1000 at most)."""
    spans: list[dict] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        spans, cursor = [], ""
        try:
            while True:
                page = _get(
                    f"{phoenix}/v1/projects/{project}/spans?limit=1000" + (f"&cursor={cursor}" if cursor else "")
                )
                spans += page["data"]
                cursor = page.get("next_cursor")
                if not cursor:
                    break
        except urllib.error.HTTPError as error:
            if error.code != 404:  # no such project yet
                raise
        if len(spans) >= count:
            return spans
        time.sleep(0.5)
    pytest.fail(f"Phoenix holds {len(spans)} spans of {project}, not {count}", pytrace=False)


@pytest.fixture
def to_phoenix(phoenix, monkeypatch):
    """The standard variables pointed at Phoenix (the project is the service name, set by each step); after the test,
    this process traces nothing."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix)
    for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        monkeypatch.delenv(name, raising=False)
    bypass_proxies(monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    yield phoenix
    telemetry.configure(TelemetryConfig(enabled=False))


PATIENT = {"export_timeout_seconds": 30.0}
"""A Phoenix still busy with its start on a loaded machine may answer slowly: nothing of the test's may be dropped."""


def test_episodes_and_a_batch_in_phoenix(to_phoenix, rom_path, walkthrough, tmp_path, browser, monkeypatch):
    """An LLM-path zork1 episode of 30 turns, then a batch of two jobs on local workers, each in a project of its
    own, read back from Phoenix; the episode's trace drawn by Phoenix is docs/telemetry-phoenix.png."""
    phoenix = to_phoenix
    monkeypatch.setenv("OTEL_SERVICE_NAME", "zorkgpt-episode")
    played = llm_episode(rom_path, walkthrough, tmp_path / "episode", PATIENT, 30)
    expected = 1 + played.summary["turns"] + sum(played.summary["llm_calls"].values())
    spans = read_spans(phoenix, "zorkgpt-episode", expected)
    _one_trace_of_30_turns(played, spans)
    _each_call_with_its_model_tokens_and_finish_reason(played, spans)
    _the_turns_carry_the_loop_breaks_events(played, spans)
    _the_trace_as_phoenix_draws_it(
        phoenix, spans, browser, Path(os.environ.get(PICTURE_VARIABLE) or tmp_path / "trace.png")
    )

    monkeypatch.setenv("OTEL_SERVICE_NAME", "zorkgpt-batch")
    _two_traces_linked_to_one_batch(phoenix, rom_path, tmp_path)


def _one_trace_of_30_turns(played, spans: list[dict]) -> None:
    summary = played.summary
    [episode] = [span for span in spans if span["name"] == "episode zork1"]
    turns = [span for span in spans if span["name"].startswith("turn ")]
    calls = [span for span in spans if span["name"].startswith("chat ")]
    assert {span["context"]["trace_id"] for span in spans} == {episode["context"]["trace_id"]}
    assert episode["parent_id"] is None and episode["span_kind"] == "AGENT"
    assert len(turns) == summary["turns"] == 30
    assert {turn["parent_id"] for turn in turns} == {episode["context"]["span_id"]}
    assert {call["parent_id"] for call in calls} <= {turn["context"]["span_id"] for turn in turns}
    assert len(calls) == sum(summary["llm_calls"].values())
    assert episode["attributes"]["zorkgpt.ending"] == summary["termination_reason"]
    assert episode["attributes"]["zorkgpt.score"] == summary["final_score"]


def _each_call_with_its_model_tokens_and_finish_reason(played, spans: list[dict]) -> None:
    """And the sums of tokens and cost are summary.json's."""
    summary = played.summary
    calls = [span["attributes"] for span in spans if span["name"].startswith("chat ")]
    for call in calls:
        assert call["gen_ai.operation.name"] == "chat"
        assert call["gen_ai.request.model"] == call["gen_ai.response.model"] == MODEL
        assert call["gen_ai.response.finish_reasons"] == ["stop"]
        assert call["gen_ai.usage.input_tokens"] > 0 and call["gen_ai.usage.output_tokens"] > 0
    details = summary["token_details"].values()
    assert sum(call["gen_ai.usage.input_tokens"] for call in calls) == sum(role["prompt"] for role in details)
    assert sum(call["gen_ai.usage.output_tokens"] for call in calls) == sum(role["completion"] for role in details)
    assert sum(call["gen_ai.usage.input_tokens"] + call["gen_ai.usage.output_tokens"] for call in calls) == sum(
        summary["tokens"].values()
    )
    assert sum(call["zorkgpt.cost_usd"] for call in calls) == pytest.approx(summary["cost_usd"]["total"], abs=1e-6)


def _the_turns_carry_the_loop_breaks_events(played, spans: list[dict]) -> None:
    turns = {span["attributes"]["zorkgpt.turn"]: span for span in spans if span["name"].startswith("turn ")}
    for record in played.records:
        names = [event["name"] for event in turns[record["turn"]]["events"]]
        assert names == [event["event_type"] for event in record["events"]]
    raised = {event["name"] for span in turns.values() for event in span["events"]}
    assert {"loop_break_warning", "loop_penalty_applied", "loop_detected"} <= raised


def _the_trace_as_phoenix_draws_it(phoenix: str, spans: list[dict], browser, picture: Path) -> None:
    """The picture of docs/telemetry.md: the episode's trace in Phoenix's own page, the loop break's warning of a
    turn open beside the tree."""
    [project] = [p for p in _get(f"{phoenix}/v1/projects")["data"] if p["name"] == "zorkgpt-episode"]
    trace_id = spans[0]["context"]["trace_id"]
    page = browser.new_page(viewport={"width": 1500, "height": 950})
    page.goto(f"{phoenix}/projects/{project['id']}/traces/{trace_id}")
    page.get_by_text("episode zork1").first.wait_for(timeout=60_000)
    page.get_by_text("turn 26", exact=True).first.click()
    page.get_by_role("tab", name="Events").first.click()
    page.get_by_text("loop_break_warning").first.wait_for(timeout=30_000)
    page.screenshot(path=str(picture))
    page.close()
    assert picture.stat().st_size > 10_000


def _two_traces_linked_to_one_batch(phoenix: str, rom_path: Path, tmp_path: Path) -> None:
    argv = ["--games", str(rom_path), "--seeds", "1,2", "--workers", "2", "--max-turns", "5"]
    argv += ["--agent", "offline", "--critic", "offline", "--out", str(tmp_path / "batch"), "--quiet"]
    config = tmp_path / "pyproject.toml"
    config.write_text("[tool.zorkgpt.telemetry]\nexport_timeout_seconds = 30.0\n")  # the endpoint: the environment's
    assert runner.main([*argv, "--config", str(config)]) == 0
    spans = read_spans(phoenix, "zorkgpt-batch", 1 + 2 * (1 + 5))
    [batch] = [span for span in spans if span["name"].startswith("batch ")]
    episodes = [span for span in spans if span["name"] == "episode zork1"]
    assert len(episodes) == 2 and all(span["parent_id"] is None for span in [batch, *episodes])
    traces = {span["context"]["trace_id"] for span in episodes}
    assert len(traces) == 2 and batch["context"]["trace_id"] not in traces
    assert {span["attributes"]["zorkgpt.linked_trace_id"] for span in episodes} == {batch["context"]["trace_id"]}
    assert sorted(span["attributes"]["zorkgpt.seed"] for span in episodes) == [1, 2]
    assert batch["attributes"]["zorkgpt.batch.episodes"] == 2
