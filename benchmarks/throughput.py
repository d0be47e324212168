"""Orchestrator overhead: turns/second of the full orchestrator next to raw `FrotzEnv.step`, in the same run.

    uv run python -m benchmarks.throughput [--rom PATH] [--repeats 5] [--loop-turns 1000]

The orchestrator plays Jericho's walkthrough (forced) with the offline critic and the loop break on, writing its
records to a temporary folder; the raw figure replays the same commands on a bare FrotzEnv. Medians are reported.
The per-turn figure leaves out the episode's start (measured apart, on a one-turn episode, its own line): opening the
emulators and probing the game cost a fixed time per episode, whatever its length.

A second measure plays zork1's dam_ab looper (an A-B loop between the Dam and its lobby) for `--loop-turns` turns
with the loop break watching but never ending it: the turns a stuck agent costs before it is stopped, when the
loop break does most (penalties on every proposal, banned and finally rejected commands, warnings).

The loop break's own share is clocked inside the same episodes: the time spent in `LoopBreak` (detectors,
penalties, warnings, stop rules) and in the progress facts it reads (`WorldNovelty.observe`, with the idle replay
on the shadow emulator when a fact is new). Both also move with the machine, but as parts of one run they are not
at the mercy of the drift between runs that a loop-break-on against loop-break-off comparison would be.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from loguru import logger

from agents.looper_agent import LooperAgent
from agents.offline_critic import OfflineCritic
from agents.replay_agent import ReplayAgent
from benchmarks import cli
from managers.loop_break.loop_break import LoopBreak
from managers.novelty import WorldNovelty
from orchestration.wiring import RunOptions, build_orchestrator
from playthroughs.scenarios import ScenarioError, build_scenario, never_stopped
from session.config import ConfigError, GameConfiguration
from session.jericho_session import JerichoSession
from session.story_file import StoryFileError


def raw_ms_per_step(rom: Path, commands: list[str]) -> float:
    """Jericho's own step, in this process (the harness runs its emulators in processes of their own)."""
    from jericho import FrotzEnv

    env = FrotzEnv(str(rom))
    env.reset()
    started = time.perf_counter()
    for command in commands:
        env.step(command)
    return (time.perf_counter() - started) * 1000 / len(commands)


def episode_ms(rom: Path, config: GameConfiguration, agent) -> tuple[float, int]:
    """(wall ms of play_episode, turns played)."""
    options = RunOptions(rom=str(rom), quiet=True)
    orchestrator = build_orchestrator(
        config, options, agent=agent, critic=OfflineCritic(), knowledge=None, after_episode=()
    )
    started = time.perf_counter()
    orchestrator.play_episode()
    return (time.perf_counter() - started) * 1000, orchestrator.game_state.turn_count


LOOP_BREAK_METHODS = ((LoopBreak, ("observe", "status", "blocked", "adjust", "note_rejection")),)
PROGRESS_FACT_METHODS = ((WorldNovelty, ("observe",)),)


@contextmanager
def clocked(methods: tuple[tuple[type, tuple[str, ...]], ...]) -> Iterator[list[float]]:
    """Seconds spent inside these methods while the block runs (the originals are put back after)."""
    spent = [0.0]
    originals = [(cls, name, getattr(cls, name)) for cls, names in methods for name in names]

    def timed(method):
        def run(*args, **kwargs):
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - started

        return run

    for cls, name, method in originals:
        setattr(cls, name, timed(method))
    try:
        yield spent
    finally:
        for cls, name, method in originals:
            setattr(cls, name, method)


def clocked_episode_ms(rom: Path, config: GameConfiguration, agent) -> tuple[float, int, float, float]:
    """`episode_ms`, and the ms of it spent in the loop break and in the progress facts it reads."""
    with clocked(LOOP_BREAK_METHODS) as in_loop_break, clocked(PROGRESS_FACT_METHODS) as in_facts:
        whole, turns = episode_ms(rom, config, agent)
    return whole, turns, in_loop_break[0] * 1000, in_facts[0] * 1000


def looping_ms(rom: Path, turns: int, repeats: int) -> dict:
    """Median ms/turn of the dam_ab looper, never stopped, and the loop break's share of it."""
    logger.remove()
    built = build_scenario("dam_ab", str(rom))
    full, loop_breaks, facts = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        config = GameConfiguration.from_toml(
            "pyproject.toml", {"files": {"episode_dir": folder}, **never_stopped(turns)}
        )
        for _ in range(repeats):
            whole, played, in_loop_break, in_facts = clocked_episode_ms(
                rom, config, LooperAgent(built.prefix, built.loop)
            )
            full.append(whole / played)
            loop_breaks.append(in_loop_break / played)
            facts.append(in_facts / played)
    return {
        "turns": played,
        "orchestrator_ms": round(statistics.median(full), 4),
        "loop_break_ms": round(statistics.median(loop_breaks), 4),
        "progress_facts_ms": round(statistics.median(facts), 4),
    }


def measure(rom: Path, commands: list[str], repeats: int, agent_kind: str = "walkthrough", **loop_break) -> dict:
    """Median ms/turn of both, interleaved so that machine drift hits them alike."""
    logger.remove()
    with tempfile.TemporaryDirectory() as folder:
        config = GameConfiguration.from_toml(
            "pyproject.toml", {"files": {"episode_dir": folder}, "loop_break": loop_break}
        )
        raw, full, start, loop_breaks, facts = [], [], [], [], []
        for _ in range(repeats):
            raw.append(raw_ms_per_step(rom, commands))
            one, _ = episode_ms(rom, config, ReplayAgent(commands[:1], kind=agent_kind))
            whole, turns, in_loop_break, in_facts = clocked_episode_ms(
                rom, config, ReplayAgent(commands, kind=agent_kind)
            )
            start.append(one)
            full.append((whole - one) / (turns - 1))
            loop_breaks.append(in_loop_break / turns)
            facts.append(in_facts / turns)
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
        "loop_break_ms": round(statistics.median(loop_breaks), 4),
        "progress_facts_ms": round(statistics.median(facts), 4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_rom(parser)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--loop-turns", type=int, default=1000, help="turns of the dam_ab looper (0: not measured)")
    args = parser.parse_args(argv)
    try:
        rom = cli.story_path(args.rom)
        commands = JerichoSession(rom).walkthrough()
        result = measure(rom, commands, max(1, args.repeats))
        looping = looping_ms(rom, args.loop_turns, max(1, args.repeats)) if args.loop_turns > 0 else None
    except ScenarioError as exc:
        looping = None
        print(f"note: no looping measure ({exc})", file=sys.stderr)
    except (ConfigError, StoryFileError) as exc:
        return cli.fail(exc)
    print(
        f"walkthrough, {result['turns']} turns, median of {args.repeats}:\n"
        f"  raw FrotzEnv.step        {result['raw_step_ms']:.4f} ms/step  ({result['raw_steps_per_second']} steps/s)\n"
        f"  full orchestrator        {result['orchestrator_ms']:.4f} ms/turn  "
        f"({result['orchestrator_turns_per_second']} turns/s)\n"
        f"  orchestrator overhead    {result['overhead_ms']:.4f} ms/turn  ({result['ratio']}x raw)\n"
        f"    of which loop break    {result['loop_break_ms']:.4f} ms/turn  (detectors, penalties, stop rules)\n"
        f"    and progress facts     {result['progress_facts_ms']:.4f} ms/turn  (novelty, idle replay when needed)\n"
        f"  episode start            {result['episode_start_ms']:.1f} ms (shadow emulator, probes; once per episode)"
    )
    if looping is not None:
        print(
            f"dam_ab looper, {looping['turns']} turns, never stopped, median of {args.repeats}:\n"
            f"  full orchestrator        {looping['orchestrator_ms']:.4f} ms/turn (episode start included)\n"
            f"    of which loop break    {looping['loop_break_ms']:.4f} ms/turn\n"
            f"    and progress facts     {looping['progress_facts_ms']:.4f} ms/turn"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
