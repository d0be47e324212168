"""What an agent remembers beyond its context (`Agent.memory`) is recorded with the turns and given back on
`--resume` (`Agent.recall`): a resumed offline episode goes on exactly as the uninterrupted one did."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from agents.llm_agent import LLMAgent
from agents.llm_settings import LLMConfig
from agents.offline_agent import OfflineAgent, OfflineMemory
from orchestration.episode import ResumeError
from orchestration.wiring import RunOptions, build_orchestrator
from session.records import TurnRecord
from tests.helpers import make_config, read_episode

WALL = "wall_seconds"
"""The one field that may differ between equal runs."""


def offline(tmp_path: Path, rom_path, folder: str, episode_id: str | None = None):
    config = make_config(
        tmp_path / folder,
        gameplay={"agent": "offline", "critic": "offline", "seed": 1, "max_turns_per_episode": 120},
        knowledge={"enabled": False},
    )
    return build_orchestrator(config, RunOptions(rom=str(rom_path), quiet=True), episode_id=episode_id)


def turns(records) -> list[dict]:
    return [{k: v for k, v in r.items() if k != WALL} for r in records]


@pytest.mark.slow  # three whole episodes
def test_a_resumed_offline_episode_goes_on_as_the_uninterrupted_one(rom_path, tmp_path):
    """zork1: the offline agent remembers what it read, left behind, found to score... Without its memory a resumed
    episode read the leaflet again at once (cut after turn 30, 60 or 90: each differed from the next turn on)."""
    clean = read_episode(offline(tmp_path, rom_path, "clean").play_episode(), None)
    remembered = [r for r in clean.records if r["agent_memory"] is not None]
    assert remembered and remembered[0]["turn"] == 1 and len(remembered) < len(clean.records)  # only when it changed
    for cut in (30, 90):
        resumed = offline(tmp_path, rom_path, f"cut{cut}", episode_id=f"cut{cut}")
        records = [TurnRecord(**r) for r in clean.records[:cut]]
        result = read_episode(resumed.play_episode(resume=records), resumed)
        assert turns(result.records) == turns(clean.records[cut:]), cut  # its folder holds the turns after the cut


def test_a_memory_that_does_not_read_is_one_clear_resume_error(rom_path, tmp_path):
    clean = read_episode(offline(tmp_path, rom_path, "clean").play_episode(), None)
    records = [TurnRecord(**r) for r in clean.records[:10]]
    at = max(i for i, r in enumerate(records) if r.agent_memory is not None)  # the memory a resume gives back
    records[at] = replace(records[at], agent_memory={**records[at].agent_memory, "read": 5})
    with pytest.raises(ResumeError, match=r"^the agent's recorded memory does not read: read: Input should be a va"):
        offline(tmp_path, rom_path, "bad", episode_id="bad").play_episode(resume=records)


def test_the_offline_agents_memory_holds_everything_it_keeps():
    """An attribute added to the agent but not to its memory would be lost on `--resume`."""
    settings = {"words", "word_length"}  # given when it is built, not learnt
    assert set(vars(OfflineAgent())) - settings == set(OfflineMemory.model_fields)


def test_the_offline_agents_memory_round_trips_as_json():
    agent = OfflineAgent()
    agent.read, agent.known_tried, agent.score, agent.way_out = {"leaflet"}, {(7, "open case"), (None, "dig")}, 5, "up"
    memory = json.loads(json.dumps(agent.memory()))
    again = OfflineAgent()
    again.recall(memory)
    assert again.memory() == agent.memory()
    assert (again.read, again.known_tried, again.score) == ({"leaflet"}, {(7, "open case"), (None, "dig")}, 5)
    with pytest.raises(ValueError, match="^secret: Extra inputs are not permitted$"):
        again.recall({"secret": 1})


def test_an_llm_agent_remembers_that_the_server_refused_the_json_schema():
    config = LLMConfig(response_format="json_schema", agent_reply="thought")
    agent = LLMAgent(client=None, config=config)
    assert agent.memory() is None  # nothing to remember yet
    agent.structured = False  # the server answered the schema with a 400
    resumed = LLMAgent(client=None, config=config)
    resumed.recall(agent.memory())
    assert not resumed.structured and resumed.memory() == {"structured": False}
    with pytest.raises(ValueError):
        resumed.recall({"structured": True})
