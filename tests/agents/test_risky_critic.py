"""The `when_risky` critic asks its model only when a second opinion can change the outcome."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agents.llm_client import LLMClient
from agents.llm_critic import LLMCritic
from agents.llm_settings import LLMConfig
from agents.risky_critic import WhenRiskyCritic
from agents.scripted_llm import ScriptedOpenAI
from playthroughs.llm_path import play
from session.context import AgentContext
from session.jericho_session import JerichoSession
from tests.helpers import PYPROJECT, story_file
from tests.local_http import bypass_proxies


@pytest.fixture()
def critic_and_calls(rom_path):
    calls = []

    def reply(messages):
        calls.append(messages)
        return '{"score": 0.3, "reason": "the model doubts it"}'

    client = LLMClient(LLMConfig(), "scripted", 3, client=ScriptedOpenAI(reply))
    view = JerichoSession(rom_path).reset()
    return WhenRiskyCritic(LLMCritic(client, LLMConfig()), 0.5), calls, AgentContext(turn=1, view=view)


def test_a_plain_command_is_scored_offline_without_a_call(critic_and_calls):
    critic, calls, context = critic_and_calls
    judgement = critic.evaluate("open mailbox", context)
    assert calls == [] and judgement.source == "offline" and judgement.score >= 0.5
    assert critic.asked["offline"] == 1


@pytest.mark.parametrize(
    ("fields", "command", "why"),
    [
        ({"review_objectives": True}, "open mailbox", "the objectives are due for review"),
        ({"loop_status": "LOOP: north and south again"}, "open mailbox", "the loop break has notes this turn"),
        ({"banned": ("north",)}, "open mailbox", "the loop break has notes this turn"),
        ({"rejected": ("east",)}, "open mailbox", "a proposal was turned down this turn"),
        ({"failed_here": frozenset({"open mailbox"})}, "open mailbox", "the game refused or ignored it here before"),
        ({"tried_here": frozenset({"open mailbox"})}, "open mailbox", "it was done here before"),
    ],
)
def test_a_command_with_a_risk_goes_to_the_model(critic_and_calls, fields, command, why):
    critic, calls, context = critic_and_calls
    judgement = critic.evaluate(command, replace(context, **fields))
    assert len(calls) == 1 and judgement.score == 0.3
    assert critic.asked[f"llm: {why}"] == 1


def test_walking_a_known_way_again_is_no_risk(critic_and_calls):
    critic, calls, context = critic_and_calls
    critic.evaluate("north", replace(context, tried_here=frozenset({"north"})))
    assert calls == []


@pytest.mark.slow  # zork1's whole walkthrough on the LLM path
def test_zork1_s_walkthrough_with_the_when_risky_critic_wins_with_fewer_calls(tmp_path, monkeypatch):
    """The walkthrough through the LLM path: every step runs, victory, and the critic's calls are a fraction of
    the turns (the llm critic makes one a turn)."""
    bypass_proxies(monkeypatch)
    rom = story_file("zork1.z5")
    commands = JerichoSession(rom).walkthrough()
    summary, records, _ = play(rom, commands, PYPROJECT, tmp_path, critic="when_risky")
    assert summary["termination_reason"] == "victory" and all(record["ran"] for record in records)
    calls = summary["llm_calls"]
    assert calls["agent"] == len(records) and calls.get("critic", 0) < 0.3 * len(records)
