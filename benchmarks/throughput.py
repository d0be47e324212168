"""Orchestrator overhead: turns/second of the full orchestrator next to raw `FrotzEnv.step`, in the same run.

    uv run python -m benchmarks.throughput [--rom PATH] [--repeats 5]

The orchestrator plays Jericho's walkthrough (forced) with the offline critic and the loop break on, writing its
records to a temporary folder; the raw figure replays the same commands on a bare FrotzEnv. Medians are reported.
The per-turn figure leaves out the episode's start (measured apart, on a one-turn episode): opening the shadow
emulator and probing it costs a fixed quarter second per episode, mostly Jericho building its action templates.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from loguru import logger

from agents.offline_critic import OfflineCritic
from agents.replay_agent import ReplayAgent
from orchestration.zork_orchestrator_v2 import ZorkOrchestratorV2
from session.config import ConfigError, GameConfiguration
from session.jericho_session import JerichoSession, StoryFileError, resolve_story_file


def raw_ms_per_step(rom: Path, commands: list[str]) -> float:
    session = JerichoSession(rom)
    session.env.reset()
    started = time.perf_counter()
    for command in commands:
        session.env.step(command)
    return (time.perf_counter() - started) * 1000 / len(commands)


def episode_ms(rom: Path, commands: list[str], config: GameConfiguration, agent_kind: str) -> tuple[float, int]:
    """(wall ms of play_episode, turns played)."""
    session = JerichoSession(rom)
    orchestrator = ZorkOrchestratorV2(config, session, ReplayAgent(commands, kind=agent_kind), OfflineCritic(), quiet=True)
    started = time.perf_counter()
    orchestrator.play_episode()
    return (time.perf_counter() - started) * 1000, orchestrator.game_state.turn_count


def measure(rom: Path, commands: list[str], repeats: int, agent_kind: str = "walkthrough", **loop_break) -> dict:
    """Median ms/turn of both, interleaved so that machine drift hits them alike."""
    logger.remove()
    with tempfile.TemporaryDirectory() as folder:
        config = GameConfiguration.from_toml(
            "pyproject.toml", {"files": {"episode_dir": folder}, "loop_break": loop_break}
        )
        raw, full, start = [], [], []
        for _ in range(repeats):
            raw.append(raw_ms_per_step(rom, commands))
            one, _ = episode_ms(rom, commands[:1], config, agent_kind)
            whole, turns = episode_ms(rom, commands, config, agent_kind)
            start.append(one)
            full.append((whole - one) / (turns - 1))
    raw_ms, full_ms = statistics.median(raw), statistics.median(full)
    return {
        "turns": len(commands),
        "raw_step_ms": round(raw_ms, 4),
        "orchestrator_ms": round(full_ms, 4),
        "overhead_ms": round(full_ms - raw_ms, 4),
        "ratio": round(full_ms / raw_ms, 1),
        "orchestrator_turns_per_second": round(1000 / full_ms),
        "raw_steps_per_second": round(1000 / raw_ms),
        "episode_start_ms": round(statistics.median(start), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rom", help="story file (default: $ZORK_ROM, then games/zork1.z5)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    try:
        rom = resolve_story_file(args.rom, "games/zork1.z5")
        commands = JerichoSession(rom).walkthrough()
        result = measure(rom, commands, max(1, args.repeats))
    except (ConfigError, StoryFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"walkthrough, {result['turns']} turns, median of {args.repeats}:\n"
        f"  raw FrotzEnv.step        {result['raw_step_ms']:.4f} ms/step  ({result['raw_steps_per_second']} steps/s)\n"
        f"  full orchestrator        {result['orchestrator_ms']:.4f} ms/turn  "
        f"({result['orchestrator_turns_per_second']} turns/s)\n"
        f"  orchestrator overhead    {result['overhead_ms']:.4f} ms/turn  ({result['ratio']}x raw)\n"
        f"  episode start            {result['episode_start_ms']:.1f} ms (shadow emulator, probes; once per episode)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
