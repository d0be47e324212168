"""Walkthroughs as Jericho plays them. Blank "press a key" steps are sent as empty lines, and every critic path accepts
an empty command."""

from __future__ import annotations

import pytest

from agents.llm_client import LLMClient
from agents.llm_critic import LLMCritic
from agents.llm_settings import LLMConfig
from agents.offline_critic import OfflineCritic
from agents.replay_agent import ReplayAgent
from agents.scripted_llm import ScriptedOpenAI
from session.context import AgentContext
from session.jericho_session import JerichoSession
from tests.helpers import make_config, run_episode, story_file


@pytest.mark.slow  # a whole walkthrough on the LLM path
def test_walkthrough_with_blank_steps_wins_and_sends_them(tmp_path):
    story = story_file("yomomma.z8")
    commands = JerichoSession(story).walkthrough()
    blanks = [i for i, c in enumerate(commands) if not c.strip()]
    assert blanks, "yomomma's walkthrough is expected to hold blank steps"
    result = run_episode(story, make_config(tmp_path), ReplayAgent(commands, kind="walkthrough"))
    assert result.summary["termination_reason"] == "victory"
    assert result.summary["final_score"] == 34  # what plain Jericho reaches with the same walkthrough
    assert [r["command"] for r in result.records] == [c.strip() for c in commands]
    assert all(result.records[i]["command"] == "" for i in blanks)


def test_replay_files_treat_blank_lines_as_layout(tmp_path):
    path = tmp_path / "actions.txt"
    path.write_text("open mailbox\n\n# a comment\ntake leaflet\n")
    assert ReplayAgent.from_file(path).commands == ["open mailbox", "take leaflet"]


def test_offline_critic_scores_an_empty_command(rom_path):
    view = JerichoSession(rom_path).reset()
    judgement = OfflineCritic().evaluate("", AgentContext(turn=1, view=view))
    assert 0.5 <= judgement.score <= 1.0 and "empty" in judgement.reason


def test_llm_critic_is_shown_an_empty_command_as_such(rom_path):
    seen = []

    def reply(messages):
        seen.append(messages[-1]["content"])
        return '{"score": 0.6, "reason": "continues the game"}'

    client = LLMClient(LLMConfig(), "scripted", 3, client=ScriptedOpenAI(reply))
    view = JerichoSession(rom_path).reset()
    judgement = LLMCritic(client, LLMConfig()).evaluate("", AgentContext(turn=1, view=view))
    assert judgement.score == 0.6
    assert "Proposed command: (an empty line" in seen[0]
