"""Game-command vocabulary: the one place that knows directions and how commands are normalised."""

from __future__ import annotations

import re

# Canonical direction -> every spelling the Zork parser accepts for it.
_DIRECTION_SPELLINGS: dict[str, tuple[str, ...]] = {
    "north": ("n", "north"),
    "south": ("s", "south"),
    "east": ("e", "east"),
    "west": ("w", "west"),
    "northeast": ("ne", "northeast"),
    "northwest": ("nw", "northwest"),
    "southeast": ("se", "southeast"),
    "southwest": ("sw", "southwest"),
    "up": ("u", "up"),
    "down": ("d", "down"),
    "in": ("in", "inside", "enter"),
    "out": ("out", "outside", "exit"),
}
DIRECTIONS: tuple[str, ...] = tuple(_DIRECTION_SPELLINGS)
PRIMARY_DIRECTIONS = frozenset({"north", "south", "east", "west", "up", "down"})
"""Tried first when exploring; diagonals, in and out only once these run out (unless a description names them)."""
OPPOSITE: dict[str, str] = {
    "north": "south", "south": "north", "east": "west", "west": "east", "northeast": "southwest",
    "southwest": "northeast", "northwest": "southeast", "southeast": "northwest", "up": "down", "down": "up",
    "in": "out", "out": "in",
}  # fmt: skip
_CANONICAL = {spelling: canon for canon, spellings in _DIRECTION_SPELLINGS.items() for spelling in spellings}
_MOVE_PREFIXES = ("go ", "walk ", "run ", "head ", "move ")
MAX_COMMAND_LENGTH = 120
"""Longer commands are refused: no game needs them, and Jericho's own warning for input over 200 characters crashes
on non-ASCII text."""
INTERPRETER_VERBS = frozenset("save restore load restart quit q script unscript noscript transcript undo".split())
"""Commands the interpreter or the game's library answer outside the story: they write or load files in the current
directory (`save` leaves zork1.qzl behind, and `restore` then loads it into the next episode), restart or end the
game, or undo a turn. The harness never runs them."""
OBSERVATION_VERBS = frozenset(
    "look l examine x read listen smell search inventory i wait z score diagnose time verbose brief superbrief".split()
)
"""Verbs that only look, listen or let time pass: repeating them is harmless, never a failure (issue 9)."""
_SPACES = re.compile(r"\s+")


def normalize_command(command: str) -> str:
    """Lower-case, trimmed, single-spaced; the key under which commands are compared and counted."""
    return _SPACES.sub(" ", command.strip().lower())


def direction_of(command: str) -> str | None:
    """The canonical direction a command moves in (`n`, `go north`, `walk ne`...), or None if it is no move."""
    text = normalize_command(command)
    for prefix in _MOVE_PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix) :]
            break
    return _CANONICAL.get(text)


def command_words(command: str) -> list[str]:
    """The words of a command, lower-case, punctuation dropped."""
    return re.findall(r"[a-z0-9][a-z0-9'-]*", command.lower())


def is_observation(command: str) -> bool:
    """The command only observes (`look`, `examine carpet`, `listen`, `inventory`, `wait`...)."""
    words = command_words(command)
    return bool(words) and words[0] in OBSERVATION_VERBS


def why_not_run(command: str) -> str | None:
    """Why a command must never reach the emulator (None: it may run). The one check every path goes through."""
    words = command_words(command)
    if words and words[0] in INTERPRETER_VERBS:
        return f"'{words[0]}' is an interpreter command (files, restart, quit or undo): the harness never runs it"
    if len(command) > MAX_COMMAND_LENGTH:
        return f"longer than {MAX_COMMAND_LENGTH} characters"
    if any(not (char.isprintable() and char.isascii()) for char in command):
        return "holds a character that is not printable ASCII"
    return None
