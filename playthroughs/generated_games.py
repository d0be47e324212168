"""Fresh games nobody tuned on: TextWorld (Microsoft's text-game generator, the `textworld` dependency group) makes
Z-machine games from seeds, each with its walkthrough and its maximum score.

`tw-make custom` makes quests (a world of rooms and objects, one quest through it) and `tw-make tw-cooking` cooking
games (gather, cook and cut a recipe's ingredients, then eat the meal), at several sizes. Jericho has no bindings for
these games: the session reads them as a player sees them (session.status). Each game's walkthrough is written beside
it as `<game>.walkthrough` (JerichoSession.walkthrough reads it).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from session.config import ConfigError
from session.jericho_session import JerichoSession
from session.story_file import WALKTHROUGH_SUFFIX

QUEST_SIZES = ((6, 12, 6), (8, 15, 10), (10, 20, 12), (12, 25, 15))
"""`tw-make custom`: (world size, objects, quest length), taken in turn."""
COOKING_SIZES = ((1, 1, 1), (2, 2, 6), (3, 3, 9), (4, 4, 12))
"""`tw-make tw-cooking`: (recipe ingredients, ingredients to take, rooms: 1, 6, 9 or 12), taken in turn, every skill
on (open, cook, cut, drop)."""
MAKE_SECONDS = 180
"""How long one game may take to make; TextWorld's generator can search for a quest for a long time on some seeds,
and such a seed is replaced by the next."""
TITLE = re.compile(r"^-= (.{1,60}) =-$", re.MULTILINE)
"""How TextWorld prints a room's title on arrival."""


@dataclass(frozen=True)
class Generated:
    """A made game: where it is, how it was made, its walkthrough and its maximum score (from TextWorld's json)."""

    path: str
    kind: str
    """`quest` or `cooking`."""
    seed: int
    options: tuple[str, ...]
    steps: int
    max_score: int


def tw_make() -> str:
    """The `tw-make` command of this environment."""
    found = Path(sys.executable).with_name("tw-make")
    if found.is_file():
        return str(found)
    on_path = shutil.which("tw-make")
    if on_path is None:
        raise ConfigError("tw-make not found: install the textworld dependency group (uv sync)")
    return on_path


def read_generated(path: Path, kind: str, seed: int, options: tuple[str, ...]) -> Generated:
    """A made game, from TextWorld's json beside it; writes its walkthrough beside it (`<game>.walkthrough`)."""
    data = json.loads(path.with_suffix(".json").read_text())
    metadata = data.get("metadata") or {}
    quests = data.get("quests") or []
    walkthrough = metadata.get("walkthrough") or [c for quest in quests for c in quest.get("commands", [])]
    max_score = metadata.get("max_score") or sum(quest.get("reward", 0) for quest in quests)
    path.with_suffix(WALKTHROUGH_SUFFIX).write_text("\n".join(walkthrough) + "\n")
    return Generated(str(path), kind, seed, options, len(walkthrough), int(max_score))


def made_before(folder: Path) -> list[Generated]:
    """The games an earlier run made into `folder` (`--games`), named `<kind>-<seed>.z8`."""
    games = []
    for path in sorted(folder.glob("*.z8")):
        kind, _, seed = path.stem.partition("-")
        if kind in ("quest", "cooking") and seed.isdigit() and path.with_suffix(".json").is_file():
            games.append(read_generated(path, kind, int(seed), ()))
    return games


def make(kind: str, seed: int, index: int, folder: Path) -> Generated | None:
    """Make one game; None when TextWorld could not make one from this seed in MAKE_SECONDS."""
    if kind == "quest":
        world, objects, length = QUEST_SIZES[index % len(QUEST_SIZES)]
        options = ("custom", "--world-size", str(world), "--nb-objects", str(objects), "--quest-length", str(length))
    else:
        recipe, take, rooms = COOKING_SIZES[index % len(COOKING_SIZES)]
        options = ("tw-cooking", "--recipe", str(recipe), "--take", str(take), "--go", str(rooms))
        options += ("--open", "--cook", "--cut", "--drop")
    path = folder / f"{kind}-{seed}.z8"
    try:
        subprocess.run(
            [tw_make(), *options, "--seed", str(seed), "--output", str(path), "--silent"],
            check=True,
            capture_output=True,
            timeout=MAKE_SECONDS,
        )
    except (subprocess.TimeoutExpired, subprocess.CalledProcessError):
        return None
    return read_generated(path, kind, seed, options)


def make_all(quests: int, cooking: int, seeds: list[int], folder: Path) -> tuple[list[Generated], list[int]]:
    """The games, from `seeds` in turn (quests first); a seed TextWorld cannot make a game of is skipped and listed."""
    plan = ["quest"] * quests + ["cooking"] * cooking
    games: list[Generated] = []
    skipped: list[int] = []
    pool = iter(seeds)
    for index, kind in enumerate(plan):
        for seed in pool:
            game = make(kind, seed, index, folder)
            if game is not None:
                games.append(game)
                print(f"  made {Path(game.path).name}: {game.steps} steps, max {game.max_score}", file=sys.stderr)
                break
            skipped.append(seed)
    return games, skipped


def titles_printed(path: Path) -> int:
    """The distinct room titles the game prints along its walkthrough, in plain Jericho (no harness)."""
    session = JerichoSession(path)
    text, _ = session.env.reset()
    titles = set(TITLE.findall(text))
    for step in session.walkthrough():
        titles |= set(TITLE.findall(session.env.step(step)[0]))
    session.close()
    return len(titles)
