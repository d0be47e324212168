"""An episode through the orchestrator: its records survive a crash or Ctrl-C, one events.jsonl line a turn, the offline
agent scores and explores, and the steps after the episode run on its folder."""

from __future__ import annotations

import pytest

from agents.base import Agent, Proposal
from agents.offline_critic import OfflineCritic
from agents.registry import AGENTS
from session.config import RunOptions
from session.context import AgentContext
from session.jericho_session import JerichoSession
from session.records import GameView, read_record_dicts, read_summary
from tests.helpers import make_config, run_episode


class CrashingAgent(Agent):
    """Proposes scripted commands and raises on turn `crash_turn`."""

    kind = "crashing"

    def __init__(self, commands: list[str], crash_turn: int, error: type[BaseException] = RuntimeError):
        self.commands = list(commands)
        self.crash_turn = crash_turn
        self.error = error

    def propose(self, context: AgentContext) -> Proposal:
        if context.turn == self.crash_turn:
            raise self.error(f"agent blew up on turn {context.turn}")
        return Proposal(self.commands[context.turn - 1])


def test_events_survive_an_exception_mid_episode(rom_path, tmp_path):
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": 20})
    agent = CrashingAgent(["open mailbox", "take leaflet", "north", "north"], crash_turn=5)
    with pytest.raises(RuntimeError, match="turn 5"):
        run_episode(rom_path, config, agent, episode_id="crash")
    folder = tmp_path / "episodes" / "crash"
    records = read_record_dicts(folder)
    assert [r["turn"] for r in records] == [1, 2, 3, 4]
    assert [r["command"] for r in records] == ["open mailbox", "take leaflet", "north", "north"]
    summary = read_summary(folder)
    assert summary["termination_reason"] == "error"
    assert summary["turns"] == 4
    assert (folder / "map.json").is_file()


def test_ctrl_c_keeps_the_records_and_says_interrupted(rom_path, tmp_path):
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": 20})
    agent = CrashingAgent(["open mailbox", "north"], crash_turn=3, error=KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        run_episode(rom_path, config, agent, episode_id="ctrl-c")
    folder = tmp_path / "episodes" / "ctrl-c"
    assert len(read_record_dicts(folder)) == 2
    assert read_summary(folder)["termination_reason"] == "interrupted"


def test_one_events_line_per_turn(rom_path, tmp_path):
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": 12})
    session = JerichoSession(rom_path)
    agent = AGENTS.get("offline").build(session, config, RunOptions(), None)
    result = run_episode(rom_path, config, agent, OfflineCritic())
    assert result.summary["termination_reason"] == "max_turns"
    assert len(result.records) == result.summary["turns"] == 12
    assert [r["turn"] for r in result.records] == list(range(1, 13))
    required = {"command", "room_id_before", "room_id_after", "score_after", "candidates", "events", "response"}
    assert all(required <= set(r) for r in result.records)


def test_offline_agent_scores_and_explores(rom_path, tmp_path):
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": 300})
    # the registry (AGENTS) gives the offline agent the game's dictionary words
    session = JerichoSession(rom_path, seed=config.gameplay.seed)
    agent = AGENTS.get("offline").build(session, config, RunOptions(), None)
    assert agent.kind == "offline" and "lamp" in agent.words and len(agent.words) > 100
    result = run_episode(rom_path, config, agent, OfflineCritic())
    summary = result.summary
    print(
        f"\noffline agent: best_score {summary['best_score']}, final_score {summary['final_score']}, "
        f"rooms_visited {summary['rooms_visited']}, turns {summary['turns']}, "
        f"termination {summary['termination_reason']}"
    )
    assert summary["turns"] <= 300
    assert summary["best_score"] > 0
    assert summary["rooms_visited"] >= 15
    assert summary["agent"] == "offline" and summary["critic"] == "offline"


@pytest.mark.parametrize("noun", ["grating", "mailbox", "window"])
def test_offline_agent_opens_what_the_description_mentions(rom_path, tmp_path, noun):
    """The offline agent built by the registry (AGENTS) opens an openable thing the room description names, even when
    the word is longer than the story file's dictionary keeps (zork1 is version 3: 6 characters, `gratin`)."""
    session = JerichoSession(rom_path)
    agent = AGENTS.get("offline").build(session, make_config(tmp_path), RunOptions(), None)
    view = GameView(
        room_id=1,
        room_name="Somewhere",
        score=0,
        moves=0,
        inventory=(),
        room_objects=(),
        world_hash="x",
        text=f"You are somewhere. There is a {noun} here.",
    )
    assert agent.propose(AgentContext(turn=1, view=view)).command == f"open {noun}"


def test_steps_after_the_episode_run_on_its_folder_and_a_failing_one_loses_nothing(rom_path, tmp_path):
    """The wiring hands the orchestrator report.html as a step after the episode; a step that fails with an OSError
    (a full disk) is logged, and the records and summary stand."""
    from agents.replay_agent import ReplayAgent

    seen = []

    def fails(folder):
        seen.append(folder)
        raise OSError(28, "No space left on device")

    config = make_config(tmp_path, gameplay={"max_turns_per_episode": 3})
    result = run_episode(rom_path, config, ReplayAgent(["look", "north", "south"]), after_episode=(seen.append, fails))
    assert seen == [result.folder, result.folder]
    assert result.summary["turns"] == 3 and len(result.records) == 3
    assert not (result.folder / "report.html").exists()
