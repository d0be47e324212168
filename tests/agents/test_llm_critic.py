"""The LLM critic: anchors across the range around the configured threshold, exceptions for fights and puzzles that
answer, the agent's thought in its prompt, and a verdict read outside its reasoning, asked for once more when
unreadable, then scored offline (counted in summary.json). Real client path: LLMClient over ScriptedOpenAI."""

from __future__ import annotations

import json

import pytest

from agents.llm_agent import LLMAgent
from agents.llm_client import LLMClient
from agents.llm_critic import LLMCritic, read_verdict
from agents.llm_settings import LLMConfig
from agents.prompts import CRITIC_RETRY, critic_anchors, critic_system_prompt, role_of
from agents.replay_agent import ReplayAgent
from agents.scripted_llm import ScriptedOpenAI
from session.context import AgentContext
from session.jericho_session import JerichoSession
from tests.helpers import make_config, run_episode


class Script:
    """Agent replies in turn, critic replies in turn (the last one repeats); every request kept."""

    def __init__(self, agent: list[str], critic: list[str]):
        self.agent, self.critic = list(agent), list(critic)
        self.requests: list[tuple[str, list[dict]]] = []

    def __call__(self, messages: list[dict]) -> str:
        role = role_of(messages)
        self.requests.append((role, messages))
        replies = self.agent if role == "agent" else self.critic
        return replies.pop(0) if len(replies) > 1 else replies[0]

    def of(self, role: str) -> list[list[dict]]:
        return [messages for r, messages in self.requests if r == role]


def scripted_client(script: Script, config: LLMConfig | None = None) -> LLMClient:
    return LLMClient(config or LLMConfig(), "scripted", 3, client=ScriptedOpenAI(script))


# -- the rubric ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("threshold", [0.25, 0.4, 0.5, 0.6, 0.75])
def test_anchors_span_the_range_and_information_is_clearly_accepted(threshold):
    anchors = {name: float(value) for name, value in critic_anchors(threshold).items()}
    assert anchors["progress"] > anchors["information"] > threshold == anchors["plausible"]
    assert threshold > anchors["repetition"] > anchors["futile"] >= 0
    system = critic_system_prompt("zork1", threshold)
    assert f"Below {critic_anchors(threshold)['plausible']} it is rejected" in system
    assert "below 0.5" not in system or threshold == 0.5


def test_the_default_anchors_are_the_familiar_ones():
    assert critic_anchors(0.5) == {
        "progress": "0.9",
        "information": "0.7",
        "plausible": "0.5",
        "repetition": "0.3",
        "futile": "0.1",
    }


def test_fights_and_puzzles_that_answer_are_not_repetition():
    system = critic_system_prompt("zork1")
    assert "attacking the foe again while it is still there" in system
    assert "answered with something new" in system


def test_the_configured_threshold_reaches_the_critic_built_by_main(rom_path, tmp_path, monkeypatch):
    from orchestration.wiring import RunOptions, build_orchestrator

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    config = make_config(tmp_path, gameplay={"critic": "llm", "agent": "offline", "critic_rejection_threshold": 0.35})
    args = RunOptions(rom=str(rom_path), quiet=True)
    orchestrator = build_orchestrator(config, args, session=JerichoSession(rom_path))
    assert "Below 0.35 it is rejected" in orchestrator.critic.system_prompt


# -- reading the score --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ('{"score": 0.8, "reason": "new room"}', 0.8),
        ('{"score": "0.8"}', 0.8),
        ('{"Score": 0.25}', 0.25),
        ('{"score": "7/10"}', 0.7),
        ('{"score": "85%"}', 0.85),
        ("score: 7/10", 0.7),
        ("Score: **0.6**", 0.6),
        ("0.8", 0.8),
        ("<think>score: 0.1, it looks bad</think>\nScore: 0.9", 0.9),
        ('<think>{"score": 0.1}</think>{"score": 0.9, "reason": "good"}', 0.9),
        ("<|channel|>analysis<|message|>score: 0.1<|end|><|start|>assistant<|channel|>final<|message|>score: 0.9", 0.9),
        ("score: 0.2 at first; on reflection score: 0.6", 0.6),
        ("{'score': 0.4, 'reason': 'python dict',}", 0.4),
    ],
)
def test_a_score_is_read_as_meant(reply, score):
    verdict = read_verdict(reply)
    assert verdict.judgement is not None and verdict.judgement.score == score and verdict.problem == ""


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ('{"score": 85}', "outside 0.0-1.0"),
        ("85", "outside 0.0-1.0"),
        ('{"score": 7, "reason": "out of ten?"}', "outside 0.0-1.0"),
        ("score: 10", "outside 0.0-1.0"),
        ('{"score": "120%"}', "outside 0.0-1.0"),
        ('{"score": true}', "yes or no"),
        ('{"score": "high"}', "not a number"),
        ("I like it a lot!", "no score found"),
        ("<think>score: 0.9</think>", "no score found"),
    ],
)
def test_an_unreadable_score_says_what_was_wrong(reply, problem):
    verdict = read_verdict(reply)
    assert verdict.judgement is None and problem in verdict.problem


# -- the one retry, the fallback, the counts ----------------------------------------------------------------------
def evaluate_once(rom_path, critic_replies: list[str]) -> tuple[LLMCritic, Script, object]:
    script = Script(["look"], critic_replies)
    critic = LLMCritic(scripted_client(script), LLMConfig(), "zork1")
    judgement = critic.evaluate("open mailbox", AgentContext(turn=1, view=JerichoSession(rom_path).reset()))
    return critic, script, judgement


def test_an_out_of_range_score_is_asked_for_once_more(rom_path):
    critic, script, judgement = evaluate_once(rom_path, ['{"score": 85, "reason": "good"}', '{"score": 0.85}'])
    assert (judgement.score, judgement.source) == (0.85, "llm")
    first, second = script.of("critic")
    assert second[:2] == first and second[2] == {"role": "assistant", "content": '{"score": 85, "reason": "good"}'}
    assert second[3]["role"] == "user" and "85 is outside 0.0-1.0" in second[3]["content"]
    assert second[3]["content"].startswith(CRITIC_RETRY.split("{")[0])
    assert critic.unreadable == {"retried": 1}


def test_a_second_unreadable_verdict_falls_back_to_the_offline_score(rom_path):
    critic, script, judgement = evaluate_once(rom_path, ["I like it a lot!", "Still no number."])
    assert judgement.source == "offline" and judgement.reason.startswith("[critic reply unreadable, offline score]")
    assert len(script.of("critic")) == 2  # one retry, never more
    assert critic.unreadable == {"retried": 1, "fallback": 1}


def test_a_readable_verdict_costs_one_call(rom_path):
    critic, script, judgement = evaluate_once(rom_path, ['{"score": 0.7, "reason": "fine"}'])
    assert judgement.score == 0.7 and len(script.of("critic")) == 1 and not critic.unreadable


def test_retries_and_fallbacks_are_counted_in_the_summary(rom_path, tmp_path):
    script = Script(["look"], ["85", '{"score": 0.9, "reason": "ok"}', "nothing", "still nothing"])
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": 2}, knowledge={"enabled": False})
    client = scripted_client(script, config.llm)
    result = run_episode(
        rom_path, config, ReplayAgent(["open mailbox", "north"]), LLMCritic(client, config.llm), llm_client=client
    )
    assert result.summary["critic_retries"] == 2 and result.summary["critic_fallbacks"] == 1
    assert [r["candidates"][0]["source"] for r in result.records] == ["llm", "offline"]


def test_an_offline_critic_reports_no_retries(rom_path, tmp_path):
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": 1}, knowledge={"enabled": False})
    result = run_episode(rom_path, config, ReplayAgent(["open mailbox"]))
    assert result.summary["critic_retries"] == 0 and result.summary["critic_fallbacks"] == 0


# -- the agent's thought ------------------------------------------------------------------------------------------
def test_the_critic_sees_the_agents_thought(rom_path, tmp_path):
    reply = json.dumps({"thought": "THOUGHT-XYZ the mailbox may hold a leaflet", "command": "open mailbox"})
    script = Script([reply], ['{"score": 0.9, "reason": "fine"}'])
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": 1}, knowledge={"enabled": False})
    client = scripted_client(script, config.llm)
    agent = LLMAgent(client, config.llm, config.orchestrator.max_invalid_replies, "zork1")
    result = run_episode(rom_path, config, agent, LLMCritic(client, config.llm, "zork1"), llm_client=client)
    (critic_request,) = script.of("critic")
    prompt = critic_request[-1]["content"]
    assert "Proposed command: open mailbox\nThe player's reason (its own words, not game text): THOUGHT-XYZ" in prompt
    assert result.records[0]["thought"].startswith("THOUGHT-XYZ")
    assert "THOUGHT-XYZ" not in script.of("agent")[0][-1]["content"]  # the agent is not shown its own thought here
