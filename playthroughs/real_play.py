"""Recorded play of real language models: a folder of games, each a text file of commands, one a line, as the model
typed them (`../shared/real-play`, whose README names the sources); a blank line is an empty command the model sent.
A game's story file is found by name: the first part of the file name, split on `_`, that names a story file of the
folders given. A game is played forced through the real orchestrator with the offline critic (every command runs
whatever the loop break says), so two plays of it are the same game: the replay diverges from the recorded one at the
first random event the original interpreter resolved otherwise (a fight, the thief), and what follows is still a real
model typing into a game.

**Real progress**: a turn that reached a score above every score before it, or a room the game had not shown before.
The last one is where the model stopped getting anywhere. **A false stop**: the model, left alone, scored again or
reached FALSE_STOP_ROOMS new rooms after the stop.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents.offline_critic import OfflineCritic
from agents.replay_agent import ReplayAgent
from orchestration.wiring import RunOptions, build_orchestrator
from session.config import GameConfiguration
from session.records import read_record_dicts, read_summary
from session.story_file import STORY_SUFFIXES

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
DEFAULT_PLAY = SHARED / "real-play"
DEFAULT_GAMES = (SHARED / "games", SHARED / "more-games")
FALSE_STOP_ROOMS = 3
"""New rooms the model, left alone, would still have reached after a stop that make the stop a false one (or any
score above the best before it)."""
MAX_LINES = 10_000
"""The most commands read from one game's file: far more than any recorded game, and a bound on a file that is not
one."""


class RealPlayError(ValueError):
    """A folder of real play that cannot be read: one line saying why."""


@dataclass(frozen=True)
class RecordedGame:
    """A game of real play: the file it was read from, the story file it was played on and the commands typed."""

    path: Path
    story: Path
    commands: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.path.stem


def read_game(path: Path, games: list[Path]) -> RecordedGame:
    """A game of real play: its commands (a blank line is an empty command; a line no Z-machine reads is played as
    the harness plays any such command, a turn that runs nothing) and its story file."""
    try:
        text = path.read_bytes()[: MAX_LINES * 200].decode("utf-8", errors="replace")
    except OSError as exc:
        raise RealPlayError(f"cannot read {path}: {exc.strerror}") from None
    lines = text.splitlines()[:MAX_LINES]
    if not any(line.strip() for line in lines):
        raise RealPlayError(f"{path}: no commands")
    return RecordedGame(path, story_of(path, games), tuple(line.strip()[:200] for line in lines))


def story_of(path: Path, games: list[Path]) -> Path:
    """The story file a game was played on: the first part of its name (split on `_`) naming a story file."""
    for part in path.stem.split("_"):
        for folder in games:
            for suffix in STORY_SUFFIXES:
                story = folder / f"{part}{suffix}"
                if story.is_file():
                    return story
    raise RealPlayError(f"{path.name}: no part of its name names a story file in {', '.join(map(str, games))}")


def default_story_folders() -> list[Path]:
    """The folders of story files beside the project that exist (DEFAULT_GAMES)."""
    return [folder for folder in DEFAULT_GAMES if folder.is_dir()]


def load_games(folder: Path, games: list[Path], only: str | None = None) -> list[RecordedGame]:
    """Every game of a folder of real play (its `.txt` files, by name), with the story files of `games`; `only`:
    comma-separated game names (file stems) to keep. A folder that holds none is a RealPlayError."""
    paths = sorted(p for p in folder.iterdir() if p.suffix == ".txt" and p.is_file())
    if only:
        wanted = set(only.split(","))
        paths = [p for p in paths if p.stem in wanted]
    if not paths:
        raise RealPlayError(f"no games (.txt) in {folder}" + (f" named {only}" if only else ""))
    return [read_game(path, games) for path in paths]


def play_game(game: RecordedGame, config: GameConfiguration, folder: Path) -> tuple[dict, list[dict]]:
    """One forced play of the game's commands under `config`: its summary and records."""
    agent = ReplayAgent(list(game.commands), kind="replay")
    orchestrator = build_orchestrator(
        config,
        RunOptions(rom=str(game.story), quiet=True),
        agent=agent,
        critic=OfflineCritic(),
        knowledge=None,
        after_episode=(),
    )
    try:
        played = orchestrator.play_episode().parent
    finally:
        orchestrator.session.close()
    return read_summary(played), read_record_dicts(played)


def real_progress(records: list[dict]) -> list[int]:
    """The turns that reached a score above every score before them, or a room not shown before."""
    best, turns = records[0]["score_before"] if records else 0, []
    for record in records:
        if record["score_after"] > best or record["new_room"]:
            turns.append(record["turn"])
        best = max(best, record["score_after"])
    return turns


def false_stop(alone: list[dict], stop: int) -> bool:
    """Whether the model, left alone, scored above its best so far or reached FALSE_STOP_ROOMS new rooms after
    turn `stop`."""
    before = [r["score_after"] for r in alone if r["turn"] <= stop]
    best = max([alone[0]["score_before"], *before]) if alone else 0
    after = [r for r in alone if r["turn"] > stop]
    return any(r["score_after"] > best for r in after) or sum(r["new_room"] for r in after) >= FALSE_STOP_ROOMS
