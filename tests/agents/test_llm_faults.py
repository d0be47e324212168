"""Fault injection: a tiny OpenAI-compatible server on 127.0.0.1 misbehaves in one way per case, and a short episode is
played through the real orchestrator, the real `openai` client, LLMAgent, LLMCritic and the LLM objective manager.

Whatever the fault, the episode ends by itself (no exception out of play_episode), every command that ran in the
game has its line in events.jsonl, the summary names the termination reason and counts exactly the failed calls
the server caused, and the API key appears in none of the episode's files.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest

from agents.base import LLMCallFailed, LLMUnavailable
from agents.llm_agent import LLMAgent
from agents.llm_client import LLMClient
from agents.llm_critic import LLMCritic
from agents.llm_settings import LLMConfig
from agents.prompts import role_of
from managers.objectives import ObjectiveManager
from session.checkpoints import checkpoints_for
from session.jericho_session import JerichoSession
from tests.helpers import make_config, run_episode, verdict_json
from tests.local_http import closed_port, serving

pytestmark = pytest.mark.slow  # short episodes, each against a misbehaving HTTP server

API_KEY = "sk-test-SECRET"
LEAK_MARK = "SECRET"
"""Part of the key: not even a cut-off piece of it may be written."""
ECHO_AUTHORIZATION = "%AUTHORIZATION%"
"""Replaced in a body by the request's Authorization header: a server that echoes it back."""
ALL_ROLES = ("agent", "critic")
COMMANDS = ("open mailbox", "take leaflet", "north", "east")
MAX_TURNS = 3
FAST_TIMEOUT = 0.5
HANG_SECONDS = 3.0
EPISODE_FILES = ("events.jsonl", "episode.log.jsonl", "summary.json")


# -- what the server sends ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Answer:
    """One HTTP answer; `failure` is the category the client must count for it (None: not a failed call)."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    failure: str | None = None


def completion(content: object) -> dict:
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


def reply(content: object, failure: str | None = None) -> Answer:
    """A well-formed chat completion whose message content is `content` (any JSON value, lone surrogates too)."""
    return Answer(body=json.dumps(completion(content)).encode(), failure=failure)


def error(status: int, failure: str | None, message: str = "scripted failure", headers=()) -> Answer:
    body = json.dumps({"error": {"message": message, "type": "server_error"}}).encode()
    return Answer(status=status, body=body, headers=tuple(headers), failure=failure)


def raw(body: bytes, failure: str, content_type: str = "application/json") -> Answer:
    return Answer(body=body, content_type=content_type, failure=failure)


def normal(role: str, count: int) -> Answer:
    """What a well-behaved model answers: a few different commands; a good verdict with one objective."""
    if role == "agent":
        return reply(COMMANDS[(count - 1) % len(COMMANDS)])
    return reply(json.dumps({"score": 0.9, "reason": "fine", "completed": [], "new_objectives": ["Open the mailbox"]}))


# -- when the server sends it -----------------------------------------------------------------------------------------
Plan = Callable[[str, int, int], "Answer | None"]
"""(role, that role's request number, request number over all roles), both from 1 -> the fault, or None: normal."""


def always(answer: Answer, roles=ALL_ROLES) -> Plan:
    return lambda role, count, total: answer if role in roles else None


def odd_requests(answer: Answer) -> Plan:
    """Every role's 1st, 3rd, 5th... request: with one retry allowed, each call fails once and then succeeds."""
    return lambda role, count, total: answer if count % 2 == 1 else None


def every_third(answer: Answer) -> Plan:
    """Every role's 3rd, 6th, 9th... request. (Counted over all roles instead, the failures here would all fall on
    the critic, which is then rightly declared down.)"""
    return lambda role, count, total: answer if count % 3 == 0 else None


@dataclass
class FaultServer:
    """Answers chat completions by `plan`, keeps what it was asked and the failures it caused."""

    plan: Plan = lambda role, count, total: None
    counts: Counter = field(default_factory=Counter)
    caused: Counter = field(default_factory=Counter)
    authorizations: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def answer(self, body: dict, authorization: str) -> Answer:
        messages = body.get("messages") or [{}]
        role = role_of(messages)
        with self.lock:
            self.counts[role] += 1
            self.counts["all"] += 1
            self.authorizations.append(authorization)
            answer = self.plan(role, self.counts[role], self.counts["all"]) or normal(role, self.counts[role])
            if answer.failure:
                self.caused[answer.failure] += 1
        return answer


@pytest.fixture
def fault_server(no_proxy):
    server = FaultServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            authorization = self.headers.get("Authorization") or ""
            answer = server.answer(json.loads(self.rfile.read(length) or b"{}"), authorization)
            if answer.delay and server.stop.wait(answer.delay):
                return  # the test is over: the client gave up long ago
            body = answer.body.replace(ECHO_AUTHORIZATION.encode(), authorization.encode())
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                for name, value in answer.headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass  # the client timed out and closed the connection

        def log_message(self, *args):
            pass

    with serving(Handler) as server.httpd:
        yield server
        server.stop.set()  # handlers still sleeping in a hang answer at once


@pytest.fixture
def steps(monkeypatch, rom_path) -> list[str]:
    """Every command the episode's game actually ran, in order. The summary's checkpoints play the walkthrough once a
    process, on an emulator of their own: derived here first, so that the first test of a process does not count
    those steps as the episode's."""
    session = JerichoSession(rom_path)
    try:
        checkpoints_for(session)
    finally:
        session.close()
    ran: list[str] = []
    original = JerichoSession.step

    def step(self, command):
        ran.append(command)
        return original(self, command)

    monkeypatch.setattr(JerichoSession, "step", step)
    return ran


def play(rom_path, tmp_path, base_url: str, **llm):
    llm = {"base_url": base_url, "max_retries": 0, "timeout_seconds": 5, **llm}
    config = make_config(
        tmp_path,
        llm=llm,
        gameplay={"max_turns_per_episode": MAX_TURNS},
        orchestrator={"max_consecutive_llm_failures": 3, "max_invalid_replies": 3},
    )
    client = LLMClient(config.llm, API_KEY, config.orchestrator.max_consecutive_llm_failures)
    agent = LLMAgent(client, config.llm, config.orchestrator.max_invalid_replies)
    critic = LLMCritic(client, config.llm)
    objectives = ObjectiveManager(config.loop_break, "llm")
    return run_episode(rom_path, config, agent, critic, llm_client=client, objectives=objectives)


def episode_text(result) -> str:
    return "\n".join((result.folder / name).read_text(encoding="utf-8") for name in EPISODE_FILES)


def assert_sound(result, steps: list[str], reason: str, failures: dict[str, int]) -> None:
    """The properties every fault case must keep (see the module docstring)."""
    summary, records = result.summary, result.records
    assert summary["termination_reason"] == reason
    assert summary["llm_failures"] == failures
    assert summary["turns"] == len(records)
    assert [r["turn"] for r in records] == list(range(1, len(records) + 1))
    assert [r["command"] for r in records if r["ran"]] == steps  # every command that ran has its record, no other
    assert LEAK_MARK not in episode_text(result)


def unavailable_message(result) -> str:
    """The log line that ended the episode as llm_unavailable."""
    log = (result.folder / "episode.log.jsonl").read_text(encoding="utf-8").splitlines()
    (line,) = [json.loads(x)["text"] for x in log if '"episode_end"' in x]
    return line


# -- transport and status faults: the calls fail, the episode ends as llm_unavailable ---------------------------------
UNAVAILABLE = {
    "500": (always(error(500, "server_error")), "agent"),
    "503_critic_only": (always(error(503, "server_error"), roles=("critic",)), "critic"),
    "429": (always(error(429, "rate_limit", headers=[("Retry-After", "1")])), "agent"),
    "404": (always(error(404, "http_404")), "agent"),
    "empty_content": (always(reply("", "empty_response")), "agent"),
    "blank_content": (always(reply(" \n\t", "empty_response")), "agent"),
    "null_content": (always(reply(None, "empty_response")), "agent"),
    "number_content": (always(reply(42, "non_text_content")), "agent"),
    "list_content": (always(reply(["north"], "non_text_content")), "agent"),
    "invalid_json_body": (always(raw(b'{"choices": [', "invalid_body")), "agent"),
    "non_utf8_body": (always(raw(b'{"choices": [{"message": {"content": "\xff\xfe"}}]}', "invalid_body")), "agent"),
    "plain_text_body": (always(raw(b"upstream overloaded", "invalid_body", content_type="text/plain")), "agent"),
    "array_body": (always(raw(b"[1, 2, 3]", "invalid_body")), "agent"),
    "missing_choices": (always(raw(b'{"id": "x", "object": "chat.completion"}', "no_choices")), "agent"),
    "empty_choices": (always(raw(b'{"choices": []}', "no_choices")), "agent"),
    "choice_without_message": (always(raw(b'{"choices": [{"index": 0}]}', "no_message")), "agent"),
}


@pytest.mark.parametrize("fault", list(UNAVAILABLE))
def test_failing_calls_end_the_episode_as_llm_unavailable(rom_path, tmp_path, fault_server, steps, fault):
    fault_server.plan, role = UNAVAILABLE[fault]
    result = play(rom_path, tmp_path, fault_server.base_url)
    assert_sound(result, steps, "llm_unavailable", dict(fault_server.caused))
    assert f"the {role} role failed 3 LLM calls in a row" in unavailable_message(result)
    assert all(auth == f"Bearer {API_KEY}" for auth in fault_server.authorizations)


def test_null_and_empty_content_are_the_same_failure(rom_path, tmp_path, fault_server, steps):
    fault_server.plan = always(reply("", "empty_response"), roles=("agent",))
    empty = play(rom_path, tmp_path / "empty", fault_server.base_url).summary
    fault_server.plan = always(reply(None, "empty_response"), roles=("agent",))
    null = play(rom_path, tmp_path / "null", fault_server.base_url).summary
    assert empty["llm_failures"] == null["llm_failures"] == {"empty_response": 3}
    assert empty["termination_reason"] == null["termination_reason"] == "llm_unavailable"


def test_a_server_that_hangs_times_out(rom_path, tmp_path, fault_server, steps):
    fault_server.plan = always(Answer(delay=HANG_SECONDS, failure="timeout"), roles=("agent",))
    result = play(rom_path, tmp_path, fault_server.base_url, timeout_seconds=FAST_TIMEOUT)
    assert_sound(result, steps, "llm_unavailable", {"timeout": 3})  # waited out, the empty 200 would fail otherwise


def test_a_refused_connection_ends_the_episode(rom_path, tmp_path, no_proxy, steps):
    port = closed_port()
    result = play(rom_path, tmp_path, f"http://127.0.0.1:{port}/v1")
    # three agent calls in a row (the objectives make no call of their own)
    assert_sound(result, steps, "llm_unavailable", {"connection": 3})
    assert "the agent role failed 3 LLM calls in a row" in unavailable_message(result)


def test_a_critic_always_down_ends_the_episode_though_the_agent_answers(rom_path, tmp_path, fault_server, steps):
    """Failures in a row are counted per role: the agent's successes do not reset the critic's count."""
    fault_server.plan = always(error(500, "server_error"), roles=("critic",))
    result = play(rom_path, tmp_path, fault_server.base_url)
    assert_sound(result, steps, "llm_unavailable", {"server_error": 3})
    assert fault_server.counts["agent"] >= 3 and fault_server.counts["critic"] == 3
    assert all(r["critic_reason"].startswith("[critic call failed: server_error") for r in result.records)


# -- faults the episode survives -------------------------------------------------------------------------------------
def test_rate_limits_honour_retry_after_and_are_not_failures(rom_path, tmp_path, fault_server, steps):
    fault_server.plan = odd_requests(error(429, None, headers=[("Retry-After", "0.05")]))
    result = play(rom_path, tmp_path, fault_server.base_url, max_retries=1)
    assert_sound(result, steps, "max_turns", {})
    assert len(result.records) == MAX_TURNS
    proposals = sum(len(r["candidates"]) for r in result.records)  # `take leaflet` in a closed mailbox: refused
    assert fault_server.counts["agent"] == 2 * proposals  # each call: a 429, then the answer


def test_a_retry_after_of_an_hour_is_not_waited_for(rom_path, tmp_path, fault_server, steps):
    """The openai client only honours a Retry-After of up to two minutes; past that it gives up at once."""
    fault_server.plan = always(error(429, "rate_limit", headers=[("Retry-After", "3600")]))
    result = play(rom_path, tmp_path, fault_server.base_url, max_retries=2)
    assert_sound(result, steps, "llm_unavailable", {"rate_limit": 3})
    assert fault_server.counts["all"] == 3  # one request per call: no retry, no sleep


def test_intermittent_failures_do_not_end_the_episode(rom_path, tmp_path, fault_server, steps):
    fault_server.plan = every_third(error(500, "server_error"))
    result = play(rom_path, tmp_path, fault_server.base_url)
    assert_sound(result, steps, "max_turns", dict(fault_server.caused))
    assert result.summary["llm_failures"]["server_error"] >= 2
    assert len(result.records) == MAX_TURNS


# agent replies that are not one command: every turn runs nothing in their place, no call failed
HUGE = "north " * 200_000
BAD_REPLIES = {
    "garbage": ("\x00\x1b[2J@@%%\x07", "invalid_characters"),
    "prose": ("I think we should carefully explore the house first.", "prose"),
    "markdown": ("### Options\n- north\n- east", "multiple_commands"),
    "multi_command": ("open mailbox; take leaflet", "multiple_commands"),
    "multi_line": ("north\nsouth\neast", "multiple_commands"),
    "huge": (HUGE, "too_long"),
    "surrogate": ("\ud800north\udfff", "invalid_characters"),
    "echoed_key": (f"Authorization: Bearer {API_KEY}", "invalid_characters"),
}


@pytest.mark.parametrize("fault", list(BAD_REPLIES))
def test_unparseable_agent_replies_run_nothing_in_their_place(rom_path, tmp_path, fault_server, steps, fault):
    """Never the raw text, never a command the model did not write: each turn runs nothing and says why."""
    content, kind = BAD_REPLIES[fault]
    fault_server.plan = always(reply(content), roles=("agent",))
    result = play(rom_path, tmp_path, fault_server.base_url)
    assert_sound(result, steps, "max_turns", {})
    assert steps == [] and len(result.records) == MAX_TURNS
    assert all(r["response"].startswith("[not run: no game command") for r in result.records)
    assert {r["fallback"] for r in result.records} == {f"unparseable_reply:{kind}"}
    failures = [f for r in result.records for f in r["parse_failures"]]
    # three replies a proposal, then one fewer for each further proposal in a row with none usable (at least one)
    asked = [max(1, 3 - max(0, turn - 1)) for turn in range(MAX_TURNS)]
    assert [len(r["parse_failures"]) for r in result.records] == asked
    assert all(len(f["reply"]) <= 300 for f in failures)


def test_an_echoed_key_is_redacted_from_the_recorded_reply(rom_path, tmp_path, fault_server, steps):
    fault_server.plan = always(reply(f"key: {ECHO_AUTHORIZATION}"), roles=("agent",))
    result = play(rom_path, tmp_path, fault_server.base_url)
    assert_sound(result, steps, "max_turns", {})
    assert result.records[0]["parse_failures"][0]["reply"] == "key: Bearer [redacted]"


def test_an_error_body_with_the_key_and_escape_codes_is_redacted_and_printable(rom_path, tmp_path, fault_server, steps):
    message = f"\x1b[2J\x1b]0;pwned\x07denied for {ECHO_AUTHORIZATION} \x1b[31mretry\x1b[0m"
    body = json.dumps({"error": {"message": message}}).encode()
    fault_server.plan = always(Answer(status=500, body=body, failure="server_error"), roles=("critic",))
    result = play(rom_path, tmp_path, fault_server.base_url)
    assert_sound(result, steps, "llm_unavailable", {"server_error": 3})
    final = unavailable_message(result)
    assert "denied for Bearer [redacted] retry" in final
    text = episode_text(result)
    assert "\\u001b" not in text and "\x1b" not in text and "\\u0007" not in text


# critic replies the parsers refuse: the offline score stands in, and no objective comes from them
CRITIC_REPLIES = {
    "score_above_one": verdict_json(1.5, "too good"),
    "score_below_zero": verdict_json(-0.2, "too bad"),
    "boolean_score": json.dumps({"score": True, "reason": "yes"}),
    "word_score": json.dumps({"score": "high", "reason": "quoted"}),
    "score_line_out_of_range": "score: 10",
    "prose": "Looks like a decent move to me!",
    "deep_json": '{"score": ' + "[" * 50_000 + "]" * 50_000 + "}",
    "long_integer": '{"score": ' + "7" * 5_000 + "}",
    "braces": "{" * 100_000,
}


@pytest.mark.parametrize("fault", list(CRITIC_REPLIES))
def test_unreadable_critic_replies_fall_back(rom_path, tmp_path, fault_server, steps, fault):
    fault_server.plan = always(reply(CRITIC_REPLIES[fault]), roles=("critic",))
    result = play(rom_path, tmp_path, fault_server.base_url)
    assert_sound(result, steps, "max_turns", {})
    assert steps == list(COMMANDS[:MAX_TURNS])
    candidates = [c for r in result.records for c in r["candidates"]]
    assert candidates and all(c["source"] == "offline" and 0.0 <= c["score"] <= 1.0 for c in candidates)
    assert result.orchestrator.objectives.discovered_objectives == []


def test_a_surrogate_in_the_critic_reason_is_recorded_safely(rom_path, tmp_path, fault_server, steps):
    fault_server.plan = always(reply(verdict_json(0.9, "fine \ud800 move")), roles=("critic",))
    result = play(rom_path, tmp_path, fault_server.base_url)
    assert_sound(result, steps, "max_turns", {})
    assert result.records[0]["critic_reason"] == "fine \ufffd move"


# -- the client on its own ---------------------------------------------------------------------------------------------
class StubCompletions:
    """Stands in for `openai.OpenAI().chat.completions`: each create() pops the next outcome."""

    def __init__(self, *outcomes):
        self.outcomes = list(outcomes)
        self.chat = self
        self.completions = self

    def create(self, **kwargs):
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def stub_client(*outcomes) -> LLMClient:
    return LLMClient(LLMConfig(), API_KEY, 3, client=StubCompletions(*outcomes))


def test_the_client_raises_only_named_exceptions_with_clean_messages():
    client = stub_client(ValueError(f"Authorization: Bearer {API_KEY}\x1b[2J\x00 broken"))
    with pytest.raises(LLMCallFailed) as caught:
        client.chat("agent", "m", [], 0.0, 5)
    assert caught.value.category == "invalid_body"
    assert str(caught.value) == "agent call failed (invalid_body): Authorization: Bearer [redacted] broken"
    assert caught.value.__suppress_context__  # the raw server text is not shown in a traceback


def test_failures_in_a_row_are_counted_per_role():
    down = ValueError("down")
    ok = SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content="north"))])
    client = stub_client(down, ok, down, ok, down)
    for role in ("critic", "agent", "critic", "agent"):
        try:
            client.chat(role, "m", [], 0.0, 5)
        except LLMCallFailed:
            pass
    with pytest.raises(LLMUnavailable, match="^the critic role failed 3 LLM calls in a row"):
        client.chat("critic", "m", [], 0.0, 5)


# -- the console, through main.py --------------------------------------------------------------------------------------
def test_the_console_never_shows_the_key_or_escape_codes(rom_path, tmp_path, fault_server, capsys, monkeypatch):
    """A 401 that echoes the Authorization header, with terminal escape codes: main.py's console (not --quiet)
    shows the failure, the key redacted and the escapes gone, exits 3 and says why."""
    import main

    message = f"\x1b[2J\x1b]0;pwned\x07bad key {ECHO_AUTHORIZATION}"
    fault_server.plan = always(error(401, "http_401", message))
    monkeypatch.setenv("ZORKGPT_FAULT_KEY", API_KEY)
    config = tmp_path / "llm.toml"
    config.write_text(
        f"[tool.zorkgpt.llm]\nbase_url = '{fault_server.base_url}'\napi_key_env = 'ZORKGPT_FAULT_KEY'\n"
        "max_retries = 0\ntimeout_seconds = 5\n"
    )
    code = main.main(
        ["--config", str(config), "--rom", str(rom_path), "--episode-dir", str(tmp_path / "eps"), "--max-turns", "3"]
    )
    out, err = capsys.readouterr()
    assert code == main.EXIT_LLM_UNAVAILABLE
    assert "bad key Bearer [redacted]" in err
    for text in (out, err):
        assert LEAK_MARK not in text and "\x1b" not in text and "\x07" not in text
    assert err.strip().splitlines()[-1].startswith("error: the LLM became unavailable")
    folder = tmp_path / "eps"
    assert LEAK_MARK not in "".join(p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file())
