"""Named batch protocols: `main.py batch --preset NAME` fixes the steps, seeds and games of a published benchmark
and writes its table beside results.md.

A preset gives defaults, not locks: a flag the user gives explicitly (`--seeds`, `--max-turns`, `--episodes`,
`--games`) wins, and the preset's table says in its header how the run differs from the protocol, so a smoke run
on one seed is never read as the protocol's figure.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from session.emulator import EmulatorFailed
from session.story_file import StoryFileError, check_story_bytes, start_emulator

DATA = Path(__file__).resolve().parent / "data"
"""Published figures the presets' tables set beside a run (JSON files, each naming its source)."""


class Preset(BaseModel):
    """A benchmark's protocol as batch settings."""

    model_config = ConfigDict(frozen=True)

    name: str
    """What `--preset` calls it."""
    title: str
    """The benchmark's name in its table's header."""
    max_turns: int = Field(ge=1)
    """Steps (game commands) an episode plays: `gameplay.max_turns_per_episode`."""
    seeds: tuple[int, ...]
    """The emulator seeds, one episode each."""
    episodes: int = Field(1, ge=1)
    """Episodes per (game, seed)."""
    games: str = "../shared/games"
    """The folder of story files played when `--games` is not given."""
    needs_max_score: bool = True
    """Play only story files Jericho has bindings for, with a maximum score (a normalized score needs one)."""
    reference: str
    """The file under batch/data of the published figures the table sets beside the run."""

    def seeds_flag(self) -> str:
        return ",".join(str(seed) for seed in self.seeds)

    def reference_path(self) -> Path:
        return DATA / self.reference


PRESETS = {
    preset.name: preset
    for preset in (
        Preset(
            name="tales",
            title="TALES (Jericho games)",
            max_turns=100,
            seeds=(1, 2, 3, 4, 5),
            reference="tales_reference.json",
        ),
    )
}


def why_unscored(story: Path) -> str | None:
    """Why the story file has no normalized score (no Jericho bindings with a maximum score, or the emulator does
    not run it); None when it has one. Starts an emulator (a process of its own) and closes it."""
    try:
        check_story_bytes(story)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Jericho warns of a game it has no bindings for: that is the answer
            emulator = start_emulator(story, None)
    except (StoryFileError, EmulatorFailed, OSError) as exc:
        return f"the emulator does not run it ({exc})"
    try:
        if not emulator.is_fully_supported:
            return "no Jericho bindings"
        return None if emulator.get_max_score() else "no maximum score in its Jericho bindings"
    finally:
        emulator.close()


def choose_stories(preset: Preset, stories: list[Path]) -> tuple[list[Path], dict[str, str]]:
    """The story files the preset plays, and the others by name with why each is left out."""
    if not preset.needs_max_score:
        return stories, {}
    reasons = {story: why_unscored(story) for story in stories}
    return [s for s in stories if reasons[s] is None], {s.stem: why for s, why in reasons.items() if why is not None}
