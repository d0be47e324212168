"""The sets of raw replies the agent's reply reader is measured on (tests/data/), and how it read each reply: as
expected, an honest failure (a command expected, an InvalidReply given) or a different command (a command other than
the expected one, or any command where a failure was expected).

`replies.toml` is the project's corpus, written together with the reader; `replies_dev.toml` holds shapes the corpus
lacked, which the reader was tuned on; `replies_heldout.toml` other shapes and wordings written at the same time and
never tuned on (its known failures are listed with their reasons). A reply is read with the dictionary of its game
(`game`, of the entry or of its file), as on the LLM path; the project corpus names no game.
"""

from __future__ import annotations

import inspect
import tomllib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agents.base import InvalidReply
from session.commands import GameDictionary
from session.jericho_session import JerichoSession
from session.story_file import STORY_SUFFIXES, StoryFileError

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
CORPUS = DATA / "replies.toml"
SETS = {"project": CORPUS, "dev": DATA / "replies_dev.toml", "held-out": DATA / "replies_heldout.toml"}
"""The sets, by name: the project's corpus, the development set (tuned on) and the held-out set (only measured)."""
FAILURE = "failure"
OUTCOMES = ("expected", "honest_failure", "different")
"""How one reply was read: as expected, refused although a command was expected, or turned into another command."""
TARGET_EXPECTED = 0.98
"""The share of the project corpus read as expected."""

Reader = Callable[[str, GameDictionary | None], tuple[str, str]]


def load_corpus(path: Path = CORPUS) -> tuple[dict[str, str], list[dict]]:
    """(shape -> where it is documented, the replies) of a set; each reply's `game` is its own, else the file's,
    else None (read without a dictionary)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    replies = [{**reply, "game": reply.get("game", data.get("game"))} for reply in data["reply"]]
    return {name: shape["source"] for name, shape in data["shapes"].items()}, replies


def dictionaries(replies: list[dict], games: Path) -> dict[str, GameDictionary]:
    """The dictionary of every game the replies name, read from its story file in `games` (once each)."""
    found: dict[str, GameDictionary] = {}
    for game in sorted({reply["game"] for reply in replies if reply["game"]}):
        story = next(
            (games / f"{game}{suffix}" for suffix in STORY_SUFFIXES if (games / f"{game}{suffix}").is_file()), None
        )
        if story is None:
            raise StoryFileError(f"no story file for {game} in {games}")
        session = JerichoSession(story)
        found[game] = GameDictionary.of((entry.word for entry in session.dictionary()), session.dictionary_word_length)
    return found


def outcome(read: str | None, expect: str) -> str:
    """`read` is the command given (None: an honest failure); `expect` the command or FAILURE."""
    if read is None:
        return "expected" if expect == FAILURE else "honest_failure"
    return "expected" if read == expect else "different"


@dataclass
class Tally:
    counts: Counter = field(default_factory=Counter)
    by_shape: dict[str, Counter] = field(default_factory=dict)
    different: list[tuple[str, str, str]] = field(default_factory=list)
    """(shape, reply, what was read) of every reply turned into a different command."""
    missed: list[tuple[dict, str]] = field(default_factory=list)
    """(reply, what was read: a command or `InvalidReply <kind>`) of every reply not read as expected."""

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def share(self, kind: str = "expected") -> float:
        return self.counts[kind] / max(self.total, 1)


def read_with(reader: Callable) -> Reader:
    """`reader` (a `parse_reply`) called with a dictionary, or without when it takes none (an earlier revision)."""
    if len(inspect.signature(reader).parameters) > 1:
        return reader
    return lambda raw, dictionary: reader(raw)


def measure(reader: Callable, replies: list[dict], games: dict[str, GameDictionary] | None = None) -> Tally:
    """Read every reply with `reader` (a `parse_reply`), given the dictionary of its game when `games` has it."""
    read_one, games = read_with(reader), games or {}
    tally = Tally()
    for reply in replies:
        try:
            read: str | None = read_one(reply["raw"], games.get(reply.get("game") or ""))[1]
            shown = read
        except InvalidReply as exc:
            read, shown = None, f"InvalidReply {exc.kind}"
        kind = outcome(read, reply["expect"])
        tally.counts[kind] += 1
        tally.by_shape.setdefault(reply["shape"], Counter())[kind] += 1
        if kind == "different":
            tally.different.append((reply["shape"], reply["raw"], read or ""))
        if kind != "expected":
            tally.missed.append((reply, shown))
    return tally
