"""The llm agent and llm critic through the real orchestrator, the real `openai` client and a scripted OpenAI-compatible
server on 127.0.0.1 that records every request."""

from __future__ import annotations

import json
import threading
from collections import Counter, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agents.llm_agent import LLMAgent
from agents.llm_client import LLMClient
from agents.llm_critic import LLMCritic, parse_judgement
from agents.prompts import AGENT_RETRY, role_of
from agents.scripted_llm import send_json
from managers.objectives import ObjectiveManager
from tests.helpers import make_config, run_episode, verdict_json
from tests.local_http import bypass_proxies, serving

WEST_OF_HOUSE, NORTH_OF_HOUSE, FOREST_PATH = 180, 81, 75
# (prompt_tokens, completion_tokens) the server reports for each role's calls
TOKENS = {"agent": (100, 3), "critic": (50, 7)}


class FakeLLM:
    """Scripted replies per role (a str is the message content, an int an HTTP error status); records requests."""

    def __init__(self):
        self.requests: list[dict] = []
        self.scripts: dict[str, deque] = {"agent": deque(), "critic": deque()}
        self.defaults = {"agent": "look", "critic": verdict_json(0.9, "fine")}
        self.always_status: int | None = None
        self.cached_tokens = 0
        """Prompt tokens every reply says were served from the provider's cache."""
        self.served_tokens: Counter = Counter()
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def script(self, key: str, *items) -> None:
        self.scripts[key].extend(items)

    def of_role(self, role: str) -> list[dict]:
        return [r for r in self.requests if r["role"] == role]

    def user_prompts(self, role: str) -> list[str]:
        return [r["messages"][-1]["content"] for r in self.of_role(role)]

    def proposed(self) -> list[str]:
        """The `Proposed command:` of every critic request."""
        found = []
        for prompt in self.user_prompts("critic"):
            found += [
                line.split(":", 1)[1].strip() for line in prompt.splitlines() if line.startswith("Proposed command:")
            ]
        return found

    def answer(self, path: str, body: dict, headers) -> tuple[int, dict]:
        messages = body.get("messages", [])
        role = key = role_of(messages)
        with self.lock:
            self.requests.append(
                {
                    "role": role,
                    "key": key,
                    "path": path,
                    "body": body,
                    "messages": messages,
                    "authorization": headers.get("Authorization"),
                }
            )
            if role == "unknown" or not path.endswith("/chat/completions"):
                return 400, {"error": {"message": f"unexpected request to {path}", "type": "invalid_request_error"}}
            if self.always_status is not None:
                return self.always_status, {"error": {"message": "scripted failure", "type": "server_error"}}
            item = self.scripts[key].popleft() if self.scripts[key] else self.defaults[key]
            if isinstance(item, int):
                return item, {"error": {"message": "scripted failure", "type": "server_error"}}
            prompt, completion = TOKENS[role]
            self.served_tokens[role] += prompt + completion
        return 200, {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": body.get("model", "test-model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": item},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": self.cached_tokens},
            },
        }


@pytest.fixture
def fake_llm(monkeypatch):
    bypass_proxies(monkeypatch)
    fake = FakeLLM()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            send_json(self, *fake.answer(self.path, body, self.headers))

        def log_message(self, *args):
            pass

    with serving(Handler) as fake.server:
        yield fake


def play_llm(rom_path, tmp_path, base_url, *, max_turns=1, llm_objectives=False, **sections):
    sections.setdefault("gameplay", {})
    sections["gameplay"] = {"max_turns_per_episode": max_turns, **sections["gameplay"]}
    llm = {"base_url": base_url, "max_retries": 0, "timeout_seconds": 5, **sections.pop("llm", {})}
    config = make_config(tmp_path, llm=llm, **sections)
    client = LLMClient(config.llm, "test-key", config.orchestrator.max_consecutive_llm_failures)
    agent = LLMAgent(client, config.llm, config.orchestrator.max_invalid_replies)
    critic = LLMCritic(client, config.llm)
    objectives = ObjectiveManager(config.loop_break, "llm") if llm_objectives else None
    return run_episode(rom_path, config, agent, critic, llm_client=client, objectives=objectives)


def candidate_view(record) -> list[tuple]:
    return [(c["command"], c["score"], c["source"], c["accepted"]) for c in record["candidates"]]


# -- a. critic rejection -> regeneration with the reason as feedback ---------------------------------------------
def test_critic_rejection_regenerates_with_feedback(rom_path, tmp_path, fake_llm):
    fake_llm.script("agent", "north", "open mailbox")
    fake_llm.script(
        "critic", verdict_json(0.2, "REASON-XYZ open the mailbox first"), verdict_json(0.9, "the mailbox is here")
    )
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, gameplay={"critic_rejection_threshold": 0.5})

    first, second = fake_llm.user_prompts("agent")
    assert "REJECTED THIS TURN" not in first
    assert "REJECTED THIS TURN" in second
    assert "- north: REASON-XYZ open the mailbox first" in second
    assert fake_llm.proposed() == ["north", "open mailbox"]

    (record,) = result.records
    assert record["command"] == "open mailbox"
    assert record["room_id_after"] == WEST_OF_HOUSE  # north did not run
    assert "leaflet" in record["response"]
    assert record["rejections"] == 1
    assert candidate_view(record) == [("north", 0.2, "llm", False), ("open mailbox", 0.9, "llm", True)]
    assert record["critic_adjusted_score"] == 0.9 and record["critic_reason"] == "the mailbox is here"
    assert record["llm_calls"] == {"agent": 2, "critic": 2}
    assert result.summary["rejections"] == 1
    assert result.summary["agent"] == "llm" and result.summary["critic"] == "llm"


def test_a_proposal_repeated_after_its_rejection_costs_no_critic_call_and_ends_the_asking(rom_path, tmp_path, fake_llm):
    """The agent insists on `north` after the critic rejected it: the earlier verdict stands (no second critic call)
    and the agent is not asked a third time; the best of the turn's proposals runs."""
    fake_llm.script("agent", "north", "N", "open mailbox")
    fake_llm.script("critic", verdict_json(0.2, "open the mailbox first"))
    result = play_llm(rom_path, tmp_path, fake_llm.base_url)
    assert Counter(r["role"] for r in fake_llm.requests) == {"agent": 2, "critic": 1}
    (record,) = result.records
    assert candidate_view(record) == [("north", 0.2, "llm", False), ("n", 0.2, "llm", False)]
    assert record["command"] == "north" and record["room_id_after"] == NORTH_OF_HOUSE


def test_requests_use_the_configured_models_and_key(rom_path, tmp_path, fake_llm):
    fake_llm.script("agent", "open mailbox")
    play_llm(
        rom_path,
        tmp_path,
        fake_llm.base_url,
        llm={"agent_model": "agent-m", "critic_model": "critic-m", "agent_max_tokens": 33, "critic_temperature": 0.1},
    )
    (agent,) = fake_llm.of_role("agent")
    (critic,) = fake_llm.of_role("critic")
    assert agent["path"] == "/v1/chat/completions"
    assert agent["authorization"] == "Bearer test-key"
    assert agent["body"]["model"] == "agent-m" and agent["body"]["max_tokens"] == 33
    assert critic["body"]["model"] == "critic-m" and critic["body"]["temperature"] == 0.1
    assert "West" in agent["messages"][1]["content"] and agent["messages"][1]["content"].endswith("Your reply:")


# -- requests every OpenAI-compatible server accepts ------------------------------------------------------------
@pytest.mark.parametrize(
    ("llm", "sent", "absent"),
    [
        ({}, {"max_tokens": 300, "temperature": 0.7}, ("max_completion_tokens",)),
        ({"response_format": "text"}, {"max_tokens": 300}, ("response_format",)),
        (  # a reasoning model: its own token cap, no temperature
            {"token_limit_parameter": "max_completion_tokens", "send_temperature": False},
            {"max_completion_tokens": 300},
            ("max_tokens", "temperature"),
        ),
        ({"token_limit_parameter": "none"}, {}, ("max_tokens", "max_completion_tokens")),
        # only the model's name: its family says how it is called
        (
            {"agent_model": "o4-mini"},
            {"max_completion_tokens": 8000},
            ("max_tokens", "temperature", "reasoning_effort"),
        ),
        (
            {"agent_model": "openai/o4-mini", "reasoning_effort": "low"},
            {"max_completion_tokens": 8000, "reasoning_effort": "low"},
            ("max_tokens", "temperature"),
        ),
        ({"reasoning_effort": "low"}, {"max_tokens": 300, "temperature": 0.7}, ("reasoning_effort",)),
        ({"agent_model": "deepseek-r1:14b"}, {"max_tokens": 8000, "temperature": 0.7}, ("max_completion_tokens",)),
    ],
)
def test_token_cap_and_temperature_are_sent_as_configured(rom_path, tmp_path, fake_llm, llm, sent, absent):
    fake_llm.script("agent", json.dumps({"thought": "the mailbox", "command": "open mailbox"}))
    play_llm(rom_path, tmp_path, fake_llm.base_url, llm={"agent_temperature": 0.7, **llm})
    (agent,) = fake_llm.of_role("agent")
    assert {key: agent["body"][key] for key in sent} == sent
    assert not [key for key in absent if key in agent["body"]]


def test_json_schema_is_asked_for_and_dropped_when_the_server_refuses_it(rom_path, tmp_path, fake_llm):
    """The first call asks for the schema; a 400 turns it off for the episode and the same turn asks again in
    plain text. The thought is recorded, never sent to the game."""
    fake_llm.script("agent", 400, json.dumps({"thought": "mail first", "command": "open mailbox"}), "Command: north")
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, max_turns=2, llm={"response_format": "json_schema"})
    bodies = [r["body"] for r in fake_llm.of_role("agent")]
    assert bodies[0]["response_format"]["type"] == "json_schema"
    assert [("response_format" in body) for body in bodies] == [True, False, False]
    assert [r["command"] for r in result.records] == ["open mailbox", "north"]
    assert result.records[0]["thought"] == "mail first"
    assert result.summary["llm_failures"] == {"http_400": 1}


def test_a_retry_never_sends_an_assistant_message_without_content(rom_path, tmp_path, fake_llm):
    fake_llm.script("agent", "```\n```", '{"thought": "x"}', "open mailbox")
    result = play_llm(rom_path, tmp_path, fake_llm.base_url)
    assert result.records[0]["command"] == "open mailbox"
    requests = fake_llm.of_role("agent")
    assert len(requests) == 3
    for request in requests:
        for message in request["messages"]:
            assert isinstance(message["content"], str) and message["content"].strip(), message
    assert [m["role"] for m in requests[1]["messages"]] == ["system", "user", "assistant", "user"]


# -- cost and budget --------------------------------------------------------------------------------------------
PRICED = {
    "agent_model": "m",
    "critic_model": "m",
    "prices": {"m": {"input": 1000.0, "cached_input": 100.0, "output": 2000.0}},
}


def test_cost_by_role_follows_the_price_table_and_cached_tokens(rom_path, tmp_path, fake_llm):
    fake_llm.cached_tokens = 40
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, max_turns=2, llm=PRICED)
    per_call = {  # (prompt - cached) at the input price, cached at the cached price, completion at the output price
        role: ((prompt - 40) * 1000.0 + 40 * 100.0 + completion * 2000.0) / 1e6
        for role, (prompt, completion) in TOKENS.items()
    }
    cost = result.summary["cost_usd"]
    assert cost["agent"] == pytest.approx(2 * per_call["agent"])
    assert cost["critic"] == pytest.approx(2 * per_call["critic"])
    assert cost["total"] == pytest.approx(cost["agent"] + cost["critic"])
    assert result.summary["token_details"]["agent"]["cached"] == 80
    assert sum(r["llm_cost_usd"].get("agent", 0) for r in result.records) == pytest.approx(cost["agent"])


def test_the_budget_ends_the_episode(rom_path, tmp_path, fake_llm):
    """Each turn costs 0.106 + 0.064 dollars at these prices: a 0.5 budget is spent after the third turn."""
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, max_turns=10, llm=PRICED, gameplay={"max_cost_usd": 0.5})
    assert result.summary["termination_reason"] == "budget"
    assert result.summary["turns"] == 3
    assert result.summary["cost_usd"]["total"] >= 0.5


def test_a_budget_without_a_price_is_a_config_error(tmp_path):
    from agents.registry import AGENTS, CRITICS
    from orchestration.wiring import check_budget
    from session.config import ConfigError

    config = make_config(tmp_path, llm={"agent_model": "unpriced-model"}, gameplay={"max_cost_usd": 1.0})
    with pytest.raises(ConfigError, match="unpriced-model"):
        check_budget(config, AGENTS.get("llm"), CRITICS.get("offline"))
    check_budget(config, AGENTS.get("offline"), CRITICS.get("llm"))  # only the critic's gpt-4o-mini is called: priced


# -- b. object pre-check --------------------------------------------------------------------------------------------
def test_precheck_rejects_take_lamp_at_west_of_house(rom_path, tmp_path, fake_llm):
    """The brass lantern is in the Living Room: at West of House the game answers `take lamp` with "You can't see
    any lamp here!" and nothing changes, so the agent reads that answer without a turn or a critic call. (The first
    turn opens the mailbox: zork1's very first object command sets a flag on the player, a change.)"""
    fake_llm.script("agent", "open mailbox", "take lamp", "take leaflet")
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, max_turns=2)
    record = result.records[1]
    assert record["room_id_before"] == WEST_OF_HOUSE
    assert candidate_view(record)[0] == ("take lamp", 0.0, "precheck", False)
    assert fake_llm.proposed() == ["open mailbox", "take leaflet"]  # no critic request for `take lamp`
    assert record["command"] == "take leaflet"
    retry = fake_llm.user_prompts("agent")[2]
    assert "take lamp" in retry and "You can't see any lamp here!" in retry  # the game's own answer, quoted


def test_precheck_rejects_absent_object_without_critic_call(rom_path, tmp_path, fake_llm):
    """The sword is in the Living Room too; same path as above."""
    fake_llm.script("agent", "open mailbox", "take sword", "take leaflet")
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, max_turns=2)
    record = result.records[1]
    assert candidate_view(record) == [("take sword", 0.0, "precheck", False), ("take leaflet", 0.9, "llm", True)]
    assert len(fake_llm.of_role("critic")) == 2
    assert record["rejections"] == 1
    assert "You can't see any sword here!" in fake_llm.user_prompts("agent")[2]


def test_a_command_insisted_on_after_the_precheck_runs(rom_path, tmp_path, fake_llm):
    """Told the game's answer, an agent that proposes the command again is judged like any other: the game answers
    the same, and the harness never puts its own command in its place."""
    fake_llm.script("agent", "open mailbox", "take sword", "take sword")
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, max_turns=2, gameplay={"max_rejections": 1})
    record = result.records[1]
    assert candidate_view(record) == [("take sword", 0.0, "precheck", False), ("take sword", 0.9, "llm", True)]
    assert record["command"] == "take sword" and record["fallback"] is None
    assert "You can't see any sword here!" in record["response"]


def test_every_candidate_precheck_rejected_runs_nothing_in_their_place(rom_path, tmp_path, fake_llm):
    """The harness never types a command the model did not commit to: the turn runs nothing, and says why."""
    fake_llm.script("agent", "open mailbox", "take sword", "take knife")
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, max_turns=2, gameplay={"max_rejections": 1})
    record = result.records[1]
    assert (record["command"], record["ran"]) == ("", False)
    assert record["response"].startswith("[not run: every command proposed was refused")
    assert record["fallback"].startswith("every_candidate")
    assert [c["source"] for c in record["candidates"]] == ["precheck", "precheck"]
    assert len(fake_llm.of_role("critic")) == 1  # the first turn's only


# -- c. every candidate rejected: the best one runs --------------------------------------------------------------
def test_best_scoring_candidate_runs_when_all_are_rejected(rom_path, tmp_path, fake_llm):
    fake_llm.script("agent", "open mailbox", "north", "south")
    fake_llm.script(
        "critic", verdict_json(0.3, "meh"), verdict_json(0.45, "best of a bad lot"), verdict_json(0.1, "no")
    )
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, gameplay={"max_rejections": 2})
    (record,) = result.records
    assert candidate_view(record) == [
        ("open mailbox", 0.3, "llm", False),
        ("north", 0.45, "llm", False),
        ("south", 0.1, "llm", False),
    ]
    assert record["command"] == "north"  # the best, not the last
    assert record["room_id_after"] == NORTH_OF_HOUSE
    assert record["critic_adjusted_score"] == 0.45 and record["critic_reason"] == "best of a bad lot"
    assert record["rejections"] == 3
    assert record["fallback"] is None
    assert len(fake_llm.of_role("agent")) == 3  # max_rejections + 1 proposals, no more
    last_prompt = fake_llm.user_prompts("agent")[-1]
    assert "- open mailbox: meh" in last_prompt and "- north: best of a bad lot" in last_prompt


def test_critic_rejection_threshold_is_configurable(rom_path, tmp_path, fake_llm):
    fake_llm.script("agent", "open mailbox")
    fake_llm.script("critic", verdict_json(0.3, "low but fine"))
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, gameplay={"critic_rejection_threshold": 0.25})
    (record,) = result.records
    assert record["rejections"] == 0 and record["command"] == "open mailbox"
    assert len(fake_llm.of_role("agent")) == 1


# -- d. malformed replies never reach the game ---------------------------------------------------------------------
def test_malformed_replies_are_never_sent_to_the_game(rom_path, tmp_path, fake_llm):
    fake_llm.script(
        "agent",
        # turn 1: three unparseable replies -> `look` (an empty content is a call failure, see test_llm_faults)
        "**",
        "north\nsouth",
        "Sorry, I can't help with that.",
        # turn 2: two unparseable, then a wrapped command
        "north. take lamp",
        "I think we should go north to explore.",
        "**open mailbox**",
        # turns 3 and 4: wrapped commands accepted clean
        "`north`",
        "Command: north",
    )
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, max_turns=4, orchestrator={"max_invalid_replies": 3})
    records = result.records
    assert [r["command"] for r in records] == ["", "open mailbox", "north", "north"]
    assert [r["ran"] for r in records] == [False, True, True, True]  # nothing typed in place of the unreadable
    assert records[0]["fallback"].startswith("unparseable_reply")
    assert records[0]["fallback"] == "unparseable_reply:refusal"
    assert records[0]["candidates"] == []
    assert [f["kind"] for f in records[0]["parse_failures"]] == ["empty", "multiple_commands", "refusal"]
    assert [f["kind"] for f in records[1]["parse_failures"]] == ["multiple_commands", "prose"]
    assert all(r["fallback"] is None for r in records[1:])
    assert [r["room_id_after"] for r in records] == [WEST_OF_HOUSE, WEST_OF_HOUSE, NORTH_OF_HOUSE, FOREST_PATH]
    # the critic only ever saw clean commands
    assert fake_llm.proposed() == ["open mailbox", "north", "north"]
    # a retry shows the model its bad reply and the format guidance
    retry = fake_llm.of_role("agent")[1]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"] == "**"
    assert retry[3]["content"].startswith(AGENT_RETRY.split("{")[0])
    assert len(fake_llm.of_role("agent")) == 8
    summary = result.summary
    assert summary["fallbacks"] == {"unparseable_reply:refusal": 1}
    assert summary["parse_failures"] == {"empty": 1, "multiple_commands": 2, "refusal": 1, "prose": 1}


def test_replies_are_read_against_the_game_dictionary(rom_path, tmp_path, fake_llm):
    """The agent reads replies with zork1's dictionary: `Going north.` opens with a word the game does not know and
    is asked again (without the dictionary it would be sent); `what is a grue` reads like English, but the game
    knows every word of it (Infocom's WHAT IS verb), so it runs."""
    fake_llm.script("agent", "Going north.", "what is a grue")
    result = play_llm(rom_path, tmp_path, fake_llm.base_url)
    (record,) = result.records
    assert [f["kind"] for f in record["parse_failures"]] == ["prose"]
    assert record["command"] == "what is a grue" and record["fallback"] is None
    assert "grue" in record["response"].lower() and "know the word" not in record["response"]


def test_max_invalid_replies_is_configurable(rom_path, tmp_path, fake_llm):
    fake_llm.script("agent", "I will think about it.", "open mailbox")
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, orchestrator={"max_invalid_replies": 1})
    (record,) = result.records
    assert (record["command"], record["ran"]) == ("", False)
    assert record["fallback"] == "unparseable_reply:prose"
    assert len(fake_llm.of_role("agent")) == 1


def test_unreadable_critic_reply_falls_back_to_offline_score(rom_path, tmp_path, fake_llm):
    """Asked once more, saying what was wrong; still unreadable: the offline critic scores (both counted)."""
    fake_llm.script("agent", "open mailbox")
    fake_llm.script("critic", "I like it a lot!", "I still like it!")
    result = play_llm(rom_path, tmp_path, fake_llm.base_url)
    (record,) = result.records
    assert record["command"] == "open mailbox"
    assert record["candidates"][0]["source"] == "offline"
    assert record["critic_reason"].startswith("[critic reply unreadable, offline score]")
    assert record["llm_calls"] == {"agent": 1, "critic": 2}
    assert (result.summary["critic_retries"], result.summary["critic_fallbacks"]) == (1, 1)


# -- e. objectives ride on the critic's verdict ---------------------------------------------------------------
def review_verdict(completed=(), new=()) -> str:
    return json.dumps(
        {
            "score": 0.9,
            "reason": "fine",
            "completed": [{"objective": o, "evidence": e} for o, e in completed],
            "new_objectives": list(new),
        }
    )


def test_objectives_ride_on_the_critic_verdict(rom_path, tmp_path, fake_llm):
    """No call of their own: turn 1's verdict proposes objectives, turn 2's claims the one turn 1 completed (with
    evidence from turn 1's response), and every turn costs one agent and one critic call."""
    fake_llm.script("agent", "open mailbox", "take leaflet", "north")
    fake_llm.script(
        "critic",
        review_verdict(new=["Open the mailbox", "Read the leaflet"]),
        review_verdict(completed=[("Open the mailbox", "reveals a leaflet")]),
        verdict_json(0.9, "fine"),
    )
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, max_turns=3, llm_objectives=True)
    assert Counter(r["role"] for r in fake_llm.requests) == {"agent": 3, "critic": 3}
    assert result.records[0]["objectives_added"] == ["Open the mailbox", "Read the leaflet"]
    assert [o["objective"] for o in result.records[1]["objectives_completed"]] == ["Open the mailbox"]
    assert result.records[1]["objectives_completed"][0]["completed_turn"] == 1
    critic_prompts = fake_llm.user_prompts("critic")
    assert "Also review the objectives" in critic_prompts[0] and "Also review the objectives" in critic_prompts[1]
    assert "- Open the mailbox" in critic_prompts[1] and "Completed: Open the mailbox." in critic_prompts[2]
    assert result.summary["completed_objectives"][0]["objective"] == "Open the mailbox"


def test_server_errors_end_the_episode_as_llm_unavailable(rom_path, tmp_path, fake_llm):
    """The critic fails before its command ran: the turns before are all recorded, the failed one is not."""
    fake_llm.script("agent", "open mailbox", "take leaflet")
    fake_llm.script("critic", verdict_json(0.9, "fine"), 500)
    result = play_llm(
        rom_path,
        tmp_path,
        fake_llm.base_url,
        max_turns=3,
        orchestrator={"max_consecutive_llm_failures": 1},
    )
    assert result.summary["termination_reason"] == "llm_unavailable"
    assert [r["key"] for r in fake_llm.requests] == ["agent", "critic", "agent", "critic"]
    assert result.orchestrator.session.env.get_moves() == 1  # only `open mailbox` ran in the game
    assert [r["command"] for r in result.records] == ["open mailbox"]
    assert result.summary["turns"] == 1


# -- f. token accounting ----------------------------------------------------------------------------------------
def test_calls_and_tokens_by_role_match_the_server(rom_path, tmp_path, fake_llm):
    fake_llm.script("agent", "north", "open mailbox", "take leaflet", "north")
    fake_llm.script("critic", verdict_json(0.1, "open the mailbox first"))
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, max_turns=3, llm_objectives=True)
    sent_calls = Counter(r["role"] for r in fake_llm.requests)
    assert sent_calls == {"agent": 4, "critic": 4}
    summary = result.summary
    assert summary["llm_calls"] == dict(sent_calls)
    assert summary["tokens"] == dict(fake_llm.served_tokens)
    assert summary["tokens"]["agent"] == 4 * sum(TOKENS["agent"])
    assert summary["tokens"]["critic"] == 4 * sum(TOKENS["critic"])
    assert summary["token_details"]["agent"] == {
        "prompt": 400,
        "cached": 0,
        "completion": 12,
        "reasoning": 0,
        "total": 412,
    }
    # the per-turn records add up to the summary
    per_turn_calls, per_turn_tokens = Counter(), Counter()
    for record in result.records:
        per_turn_calls.update(record["llm_calls"])
        per_turn_tokens.update(record["llm_tokens"])
    assert dict(per_turn_calls) == summary["llm_calls"]
    assert dict(per_turn_tokens) == summary["tokens"]
    assert result.records[0]["llm_calls"]["agent"] == 2
    assert summary["llm_failures"] == {}


# -- critic reply parsing ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "score", "reason"),
    [
        ('{"score": 0.8, "reason": "good move"}', 0.8, "good move"),
        ('Sure: {"score": 0, "reason": "no\\nsecond line"}', 0.0, "no"),
        ('```json\n{"score": 1.0}\n```', 1.0, "no reason given"),
        ("score: 0.3", 0.3, "score given without a reason"),
    ],
)
def test_parse_judgement_readable(reply, score, reason):
    judgement = parse_judgement(reply)
    assert (judgement.score, judgement.reason, judgement.source) == (score, reason, "llm")


@pytest.mark.parametrize("reply", ["", None, "looks fine to me", '{"score": 1.5, "reason": "x"}', '{"score": "high"}'])
def test_parse_judgement_unreadable(reply):
    assert parse_judgement(reply) is None


# -- the end-of-episode synthesis --------------------------------------------------------------------------------
def test_one_synthesis_call_keeps_only_notes_the_records_back(rom_path, tmp_path, fake_llm):
    """Turn 4 takes the egg (+5). The critic's notes cite turn 4 (kept) and turn 3 (nothing happened: dropped)."""
    from managers.knowledge import Knowledge, load_store

    fake_llm.script("agent", "north", "north", "up", "get egg")
    notes = {
        "notes": [
            {"note": "The egg up the tree scores at once.", "turn": 4},
            {"note": "Climbing the tree scores.", "turn": 3},
        ]
    }
    fake_llm.script("critic", *[verdict_json(0.9, "fine")] * 4, json.dumps(notes))
    config = make_config(
        tmp_path,
        llm={"base_url": fake_llm.base_url, "max_retries": 0, "timeout_seconds": 5},
        gameplay={"max_turns_per_episode": 4},
    )
    client = LLMClient(config.llm, "test-key", config.orchestrator.max_consecutive_llm_failures)
    path = tmp_path / "zork1.json"
    knowledge = Knowledge(load_store(path, "zork1", "b732a93a6244ddd92a9b9a3e3a46c687"), path)
    result = run_episode(
        rom_path,
        config,
        LLMAgent(client, config.llm),
        LLMCritic(client, config.llm),
        llm_client=client,
        knowledge=knowledge,
    )
    assert [r["score_after"] for r in result.records][-1] == 5
    synthesis = fake_llm.user_prompts("critic")[-1]
    assert "turn 4: +5 points for 'take egg' in Up a Tree" in synthesis  # facts name commands canonically
    assert result.summary["strategy_notes"] == 1
    assert result.summary["llm_calls"]["critic"] == 5  # four verdicts and one synthesis
    store = load_store(path, "zork1", "b732a93a6244ddd92a9b9a3e3a46c687")
    assert [(n.note, n.turn) for n in store.notes] == [("The egg up the tree scores at once.", 4)]


def test_a_model_that_writes_no_command_is_asked_less_each_turn(rom_path, tmp_path, fake_llm):
    """Three replies a proposal while the model writes commands; once two proposals in a row had none usable, one
    fewer for each further one, down to one; a usable reply brings every retry back."""
    prose = "I am not sure what to do here."
    fake_llm.script("agent", *([prose] * 9), "north", *([prose] * 3))
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, max_turns=6, orchestrator={"max_invalid_replies": 3})
    assert [len(r["parse_failures"]) for r in result.records] == [3, 3, 2, 1, 0, 3]
    assert [r["command"] for r in result.records][4] == "north"


def test_every_call_asks_for_its_schema_and_a_refusal_turns_off_that_role_s_only(rom_path, tmp_path, fake_llm):
    """By default the agent's and the critic's requests carry their JSON schemas; a 400 to the critic's turns the
    critic's schema off for the episode (the call made again at once, without it), never the agent's."""
    fake_llm.script("agent", "open mailbox", "north")
    fake_llm.script("critic", 400, verdict_json(0.9, "the mailbox is here"), verdict_json(0.9, "a way on"))
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, max_turns=2)
    agent = [r["body"].get("response_format", {}).get("json_schema", {}).get("name") for r in fake_llm.of_role("agent")]
    critic = [
        r["body"].get("response_format", {}).get("json_schema", {}).get("name") for r in fake_llm.of_role("critic")
    ]
    assert agent == ["agent_reply", "agent_reply"]
    assert critic == ["critic_verdict", None, None]
    assert [r["command"] for r in result.records] == ["open mailbox", "north"]
    assert result.summary["llm_failures"] == {"http_400": 1}


def test_the_agent_s_notes_are_kept_and_shown_in_every_later_prompt(rom_path, tmp_path, fake_llm):
    """A reply's `note` is recorded with its turn and shown, in the agent's words and marked as its own, in every
    later prompt; it never reaches the game."""
    noted = json.dumps({"thought": "mail first", "command": "open mailbox", "note": "The mailbox may hold a clue."})
    fake_llm.script("agent", noted, "north", "south")
    result = play_llm(rom_path, tmp_path, fake_llm.base_url, max_turns=3)
    assert [r["note"] for r in result.records] == ["The mailbox may hold a clue.", "", ""]
    first, *later = fake_llm.user_prompts("agent")
    assert "YOUR NOTES" not in first
    assert all("- turn 1: The mailbox may hold a clue." in prompt for prompt in later)
    assert "clue" not in " ".join(r["command"] for r in result.records)
