"""One episode of a built trajectory through the wiring, as the corpus benchmark plays it: forced (its commands always
run; what the loop break would do is recorded) or steered by the looper (its prefix replayed, then its loop steered,
falling back to other exits when the loop break's penalties reject a move). The offline critic judges; no knowledge
store, no report."""

from __future__ import annotations

from pathlib import Path

from agents.looper_agent import LooperAgent
from agents.offline_critic import OfflineCritic
from agents.replay_agent import ReplayAgent
from orchestration.wiring import RunOptions, build_orchestrator
from playthroughs.trajectories import Trajectory
from session.config import GameConfiguration
from session.records import read_record_dicts, read_summary


def play_trajectory(
    story: Path, trajectory: Trajectory, config: GameConfiguration, mode: str
) -> tuple[dict, list[dict]]:
    """One episode of a trajectory: `forced` replays it, `looper` replays its prefix and then steers its loop."""
    if mode == "looper":
        agent = LooperAgent(
            trajectory.commands[: trajectory.prefix_turns], trajectory.commands[trajectory.prefix_turns :]
        )
    else:
        agent = ReplayAgent(trajectory.commands, kind="replay")
    options = RunOptions(rom=str(story), quiet=True)
    orchestrator = build_orchestrator(
        config, options, agent=agent, critic=OfflineCritic(), knowledge=None, after_episode=()
    )
    played = orchestrator.play_episode().parent
    orchestrator.session.close()
    return read_summary(played), read_record_dicts(played)
