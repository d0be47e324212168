"""Commands whose quotes the game needs reach it through the LLM path, as the model wrote them (the reply reader kept
the quotes; the Z-machine lower-cases input anyway)."""

from __future__ import annotations

import json

import pytest

from agents.llm_agent import LLMAgent
from agents.llm_client import LLMClient
from agents.llm_critic import LLMCritic
from agents.scripted_llm import ScriptedOpenAI, cycling_replies
from tests.helpers import make_config, run_episode, story_file


@pytest.mark.parametrize(
    ("game", "step", "reply"),
    [
        ("zork2.z5", 'ANSWER "A WELL"', json.dumps({"thought": "The riddle's answer.", "command": 'answer "a well"'})),
        ("zork2.z5", 'SAY "FLOAT"', '<think>the word from the book</think>\nCommand: say "float"'),
        ("hhgg.z3", 'type "bleem"', json.dumps({"thought": "The password.", "command": 'type "bleem"'})),
    ],
)
def test_a_quoted_command_reaches_the_game_as_written(tmp_path, game, step, reply):
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": 1}, knowledge={"enabled": False})
    client = LLMClient(config.llm, "scripted", 3, client=ScriptedOpenAI(cycling_replies([reply])))
    agent = LLMAgent(client, config.llm, config.orchestrator.max_invalid_replies, game)
    result = run_episode(story_file(game), config, agent, LLMCritic(client, config.llm, game), llm_client=client)
    (record,) = result.records
    assert record["command"] == step.lower() and record["ran"] and record["fallback"] is None
    assert record["parse_failures"] == []
