"""Which progress signals should count? Measured on the healthy walkthrough and on every stuck scenario.

    uv run python -m benchmarks.studies.signals [--rom PATH] [--max-turns-stuck 40]

Each scenario is played once, forced, with the loop break off (so the whole trajectory exists); then the real
ProgressTracker replays its records under each signal set and reports the longest stretch without progress and the
turn at which `max_turns_stuck` would terminate it (checked every turn, and every 10 turns as in the original design).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from itertools import combinations
from pathlib import Path

from agents.replay_agent import ReplayAgent
from benchmarks import cli
from benchmarks.evaluate import progress_over, run_episode
from playthroughs.scenarios import build_scenario, scenario_names
from session.config import ConfigError, GameConfiguration
from session.story_file import StoryFileError
from session.tables import markdown_table

SIGNALS = ("score", "objective", "new_room", "new_world_state")


def signal_sets() -> list[tuple[str, ...]]:
    """Every set that contains `score`, smallest first."""
    others = SIGNALS[1:]
    return [("score", *extra) for size in range(len(others) + 1) for extra in combinations(others, size)]


def replay_progress(records: list[dict], signals: tuple[str, ...], limit: int) -> dict:
    longest, terminated, terminated_every_10 = 0, None, None
    for result in progress_over(records, signals):
        longest = max(longest, result.turns_stuck)
        if terminated is None and result.turns_stuck >= limit:
            terminated = result.turn
        if terminated_every_10 is None and result.turn % 10 == 0 and result.turns_stuck >= limit:
            terminated_every_10 = result.turn
    return {"longest_gap": longest, "terminated_at": terminated, "terminated_at_interval_10": terminated_every_10}


def measure(rom: Path, limit: int) -> dict[str, dict[str, dict]]:
    table: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in scenario_names():
            built = build_scenario(name, rom)
            if built.spec.driver != "replay":
                continue
            config = GameConfiguration.from_toml(
                "pyproject.toml",
                {
                    "files": {"episode_dir": folder},
                    "loop_break": {"enabled": False},
                    "gameplay": {"max_turns_per_episode": len(built.commands)},
                },
            )
            _, records = run_episode(rom, config, ReplayAgent(built.commands))
            table[name] = {"+".join(s): replay_progress(records, s, limit) for s in signal_sets()}
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_rom(parser)
    parser.add_argument("--max-turns-stuck", type=int, default=40)
    args = parser.parse_args(argv)
    from loguru import logger

    logger.remove()
    try:
        table = measure(cli.story_path(args.rom), args.max_turns_stuck)
    except (ConfigError, StoryFileError) as exc:
        return cli.fail(exc)
    scenarios = list(table)
    print(f"Terminated at turn (every turn / every 10 turns), longest gap; max_turns_stuck = {args.max_turns_stuck}\n")
    rows = []
    for signals in table[scenarios[0]]:
        cells = []
        for name in scenarios:
            cell = table[name][signals]
            end = f"{cell['terminated_at'] or '-'} / {cell['terminated_at_interval_10'] or '-'}"
            cells.append(f"{end}, gap {cell['longest_gap']}")
        rows.append((signals, *cells))
    print("\n".join(markdown_table(("signals", *scenarios), rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
