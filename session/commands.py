"""Game-command vocabulary: the one place that knows directions and how commands are normalised."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from pathlib import Path

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
    "north": "south",
    "south": "north",
    "east": "west",
    "west": "east",
    "northeast": "southwest",
    "southwest": "northeast",
    "northwest": "southeast",
    "southeast": "northwest",
    "up": "down",
    "down": "up",
    "in": "out",
    "out": "in",
}
_SENTENCE_ENDS = "."
"""What may end a command as it ends a sentence: Infocom's and Inform's parsers read a full stop as the end of one
(an exclamation mark is part of the word to zork1's: `I don't know the word "east!"`)."""
_CANONICAL = {spelling: canon for canon, spellings in _DIRECTION_SPELLINGS.items() for spelling in spellings}
DIRECTION_WORDS = frozenset(_CANONICAL)
"""Every spelling of a direction (`n`, `north`, `inside`...)."""
FUNCTION_WORDS = frozenset(
    "a an the some all it them everything him her me myself to about with on onto in into at from for under over "
    "through off of up down out by".split()
)
"""Words of a command that name no object: articles, pronouns, prepositions."""
TOPIC_VERBS = frozenset("ask tell say talk answer reply learn consult shout yell speak write type sing".split())
"""Verbs whose other words are a person and a topic, a spell or a text (agents.reply knows them as verbs)."""
QUESTION_PREFIXES = ("ask ", "tell ", "talk ", "consult ", "look up ", "reply", "answer", "say ")
"""Commands that ask a character or a book for information, or answer a character: a new answer to one is something
learnt (weapon's last scene is a conversation of bare `reply` commands)."""
_MOVE_PREFIXES = ("go ", "walk ", "run ", "head ", "move ")
TRAVEL_VERBS = frozenset("go walk run head drive ride fly travel sail row return".split())
"""Verbs of travel (agents.reply knows them as verbs)."""
MAX_COMMAND_LENGTH = 120
"""Longer commands are refused: no game needs them, and Jericho's own warning for input over 200 characters crashes
on non-ASCII text."""
INTERPRETER_VERBS = frozenset(
    "save restore restart quit q script unscript noscript transcript recording replay undo".split()
)
"""Commands the interpreter or the game's library answer outside the story: they write or read files in the current
directory (`save` leaves zork1.qzl behind and `restore` loads it into the next episode; `script`, `transcript` and
`recording` write transcripts, `replay` reads commands from a file), restart or end the game, or undo a turn. The
harness never runs them. (`load` is no such command in any corpus game, and seastalker's LOAD is a game verb.)"""
_SUB_COMMANDS = re.compile(r"[.,;!?]|\bthen\b|\band\b", re.IGNORECASE)
"""Where one input line holds several commands: `look. save` and `n and save` both save in zork1."""
OBSERVATION_VERBS = frozenset(
    "look l examine x read listen smell search inventory i wait z score diagnose time verbose brief superbrief".split()
)
"""Verbs that only look, listen or let time pass: repeating them is harmless, never a failure."""
ATTACK_VERBS = frozenset("kill attack fight hit stab slay".split())
"""Verbs of a fight: fights are random, so repeating a blow is play, not a loop."""
DICE_ROLL = "jump"
"""A harmless command whose answer many games pick at random: played on purpose, it deals new dice (measured at the
start of the 29 corpus games: it rolls them in 12, `wait` in 7)."""
WAIT_VERBS = frozenset({"wait", "z"})
"""Verbs that let time pass: timed events (a pod landing, a cave closing) take several in a row."""
TAKE_VERBS = frozenset("take get pick grab".split())
"""Verbs that pick something up."""
HANDING_VERBS = frozenset("put give insert place offer".split())
"""Verbs that use something the player holds (`put egg in case`): they can work only while it is held."""
LOOK_COMMANDS = frozenset({"look", "l"})
"""The commands that print the room's full description."""
ROUTINE_COMMANDS = LOOK_COMMANDS | {"inventory", "i"}
"""Commands a player repeats in passing anywhere: looking round, checking what is held."""
_SPACES = re.compile(r"\s+")


def spellings_of(direction: str) -> tuple[str, ...]:
    """The other spellings of a canonical direction (`southwest` -> `sw`), shortest first."""
    return tuple(sorted((s for s in _DIRECTION_SPELLINGS.get(direction, ()) if s != direction), key=len))


def normalize_command(command: str) -> str:
    """Lower-case, trimmed, single-spaced; the key under which commands are compared and counted."""
    return _SPACES.sub(" ", command.strip().lower())


ARTICLES = frozenset({"a", "an", "the", "some"})
"""Words a parser skips: `take the lamp` is `take lamp`."""
VERB_SYNONYMS: dict[tuple[str, ...], str] = {
    ("x",): "examine",
    ("l",): "look",
    ("i",): "inventory",
    ("z",): "wait",
    ("look", "at"): "examine",
    ("pick", "up"): "take",
    ("get",): "take",
}
"""Openings that most parsers read as one verb (Inform's library takes them all; older Infocom games know no `x`):
`x lamp`, `look at lamp` and `examine lamp` are one command, so are `get lamp`, `pick up lamp` and `take lamp`.
`get` followed by a preposition (`get in boat`, `get up`) is another verb and stays."""
PARTICLES = frozenset("in into on onto off out up down over through under to at from by".split())
"""Prepositions that, after a verb, make another verb of it (`get in`, `get up`)."""


@lru_cache(maxsize=4096)  # every detector asks again for the same few commands each turn
def canonical_command(command: str) -> str:
    """The one form under which every detector compares commands: a move is its canonical direction (`n`, `go
    north` and `north` are all `north`), otherwise the words without punctuation or articles, an opening that
    is one verb as that verb (`x lamp` and `look at lamp` are `examine lamp`: VERB_SYNONYMS)."""
    direction = direction_of(command)
    if direction is not None:
        return direction
    words = [word for word in words_in(command) if word not in ARTICLES]
    for opening, verb in VERB_SYNONYMS.items():
        rest = words[len(opening) :]
        if tuple(words[: len(opening)]) == opening and not (opening == ("get",) and rest and rest[0] in PARTICLES):
            return " ".join([verb, *rest])
    return " ".join(words)


@lru_cache(maxsize=8192)  # a loop re-proposes the same few commands: each is compared with every recent rejection
def command_similarity(a: str, b: str) -> float:
    """How alike two commands are, 0..1, on their canonical forms, word by word: the least alike pair of words
    decides. A typo or a plural stays close (`examine troll`/`examine trolls` 0.91, `take lamp`/`take lamps` 0.89);
    another object or particle does not (`... with sword`/`... with knife` 0, `turn on lamp`/`turn off lamp` 0.4).
    Commands of different lengths, and different moves (`northeast`/`northwest`), are 0."""
    left, right = canonical_command(a), canonical_command(b)
    if left == right:
        return 1.0
    left_words, right_words = left.split(), right.split()
    if direction_of(a) or direction_of(b) or len(left_words) != len(right_words):
        return 0.0
    return min(SequenceMatcher(None, x, y, autojunk=False).ratio() for x, y in zip(left_words, right_words))


@lru_cache(maxsize=4096)
def direction_of(command: str) -> str | None:
    """The canonical direction a command moves in (`n`, `go north`, `walk ne`...), or None if it is no move. A full
    stop at the end ends the sentence and changes nothing (`GO NORTH.`, as some models type every command): the
    parser reads the move alone."""
    text = normalize_command(command).rstrip(_SENTENCE_ENDS).rstrip()
    for prefix in _MOVE_PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix) :]
            break
    return _CANONICAL.get(text)


_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")


def words_in(text: str) -> list[str]:
    """The words of a text (a command or what the game printed), lower-case, punctuation dropped."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class Command:
    """A command as read once, for every step of a turn that asks about it: the agent's choice, the critic, the
    loop break, the shadow emulator and the session all read the same value (`read_command`)."""

    text: str
    words: tuple[str, ...]
    """Its words, lower-case, punctuation dropped."""
    canonical: str
    """The form under which commands are compared (`canonical_command`)."""
    direction: str | None
    """The canonical direction it moves in, or None (`direction_of`)."""
    refusal: str | None
    """Why it must never reach the emulator, or None (`why_not_run`)."""


@lru_cache(maxsize=8192)  # the same few commands are asked about by every step of a turn, and turn after turn
def read_command(text: str) -> Command:
    """`text` read as a command: its words, canonical form, direction and what would refuse it."""
    return Command(text, tuple(words_in(text)), canonical_command(text), direction_of(text), why_not_run(text))


_NUMBER = re.compile(r"\$?\d{1,12}(?:[-.:,]\d{1,12}){0,3}")
"""A number as a game's parser reads it (`25`, `1170`, `576-3190`, `$603`, `10:30`): no dictionary lists one."""
_WORD_EDGES = ",.!?;:\"'()"


@dataclass(frozen=True)
class GameDictionary:
    """The words a game's parser knows: its story file's dictionary (read once per emulator,
    `JerichoSession.dictionary()`), as plain data for whoever reads a command before the game does (agents.reply)."""

    words: frozenset[str]
    """Every dictionary word, lower-case, cut to `word_length` characters."""
    word_length: int
    """Characters the parser keeps of a word: 6 in version 1-3 story files, 9 from version 4. A longer word typed in
    full (`latitude`) is known by its first `word_length` characters (`latitu`)."""

    @classmethod
    def of(cls, words: Iterable[str], word_length: int) -> GameDictionary:
        return cls(frozenset(word.lower()[:word_length] for word in words), word_length)

    def knows(self, word: str) -> bool:
        """The game's parser reads `word` (punctuation around it left out): a dictionary word or a number."""
        word = word.strip(_WORD_EDGES).lower()
        return bool(word) and (word[: self.word_length] in self.words or _NUMBER.fullmatch(word) is not None)


def is_wait(command: str) -> bool:
    """The command lets time pass (`wait`, `z`, `wait for the train`)."""
    words = read_command(command).words
    return bool(words) and words[0] in WAIT_VERBS


_NAMED_DIRECTIONS = frozenset(d for d in DIRECTIONS if d not in ("in", "out"))
"""Directions a description names by their word. `in` and `out` are left out: every text uses those words."""
COMPASS_DIRECTIONS = frozenset(d for d in _NAMED_DIRECTIONS if d not in ("up", "down"))
_COMPASS = "|".join(sorted(COMPASS_DIRECTIONS, key=len, reverse=True))
_NOT_A_WAY = (
    "end|ends|wall|walls|side|sides|bank|banks|edge|edges|corner|corners|half|face|shore|tip|part|window|windows|of"
)
_COMPASS_MENTION = re.compile(rf"\b({_COMPASS})\b(?!\s+(?:{_NOT_A_WAY})\b)")
"""A compass word that names a way: not a part of the room (`the west wall is solid granite`, `the south end`) nor
where something lies (`west of a white house`)."""
_ROUTE = (
    "stair|stairs|staircase|stairway|steps|ladder|ramp|chimney|shaft|slope|hill|tunnel|passage|passageway|path|trail|"
    "road|track|rope|tree|well|hole|chute|slide|incline"
)
_MOTION = (
    "lead|leads|leading|go|goes|going|climb|climbs|climbing|head|heads|heading|continue|continues|continuing|run|"
    "runs|running|wind|winds|winding|twist|twists|twisting|descend|descends|ascend|ascends|way|" + _ROUTE
)
_VERTICAL_MENTION = re.compile(
    rf"\b(?:{_MOTION})\s+(up|down)\b(?!\s+(?:it|them)\b)"
    rf"|\b(up|down)\s+(?:the\s+|a\s+|an\s+)?(?:{_ROUTE})\b"
    r"|\b(up|down)(?:wards?|stairs)\b"
    rf"|\b(?:{_COMPASS}|up|down)(?:\s*,)?\s+(?:and|or)\s+(up|down)\b"
)
"""`up` and `down` name a way only after a word of motion or a route (`a staircase leading up`, `the chimney leads
down`) or before a route (`down the ladder`), or as `upward`, `downstairs`, or beside another way (`north and
up`): the words are everywhere else (`you wake up`, `pick up`, `sit down`), and `back up it` points at a thing, not a
way from the room."""


@lru_cache(maxsize=4096)  # the map's search asks again of every known room's text each turn
def directions_named(text: str) -> tuple[str, ...]:
    """The directions a room description names as ways out (`passages lead north and up` -> north, up), in
    DIRECTIONS order: the exits a player reading the text would try first, not verified. `north-east` counts as
    northeast; a part of the room (`the west wall`, `the south end`), a place relative to a thing (`west of the
    house`), `up`/`down` outside a phrase of motion, and `in all directions` (trees, as often as passages) do not."""
    lowered = re.sub(r"(north|south)-(east|west)", r"\1\2", text.lower())
    words = {match.group(1) for match in _COMPASS_MENTION.finditer(lowered)}
    words |= {next(g for g in match.groups() if g) for match in _VERTICAL_MENTION.finditer(lowered)}
    return tuple(d for d in DIRECTIONS if d in words)


_EVERY_WAY = re.compile(
    r"\b(?:passage|passageway|tunnel|corridor|path|trail|road|exit|opening|doorway|archway)s?\s+"
    rf"(?:(?:{_MOTION})\s+)?(?:(?:off|out|away)\s+)?(?:in|to)\s+(?:all|every)\s+directions?\b"
)
"""How a description says its ways lead every way at once (zork1's Round Room: `passages in all directions`). Trees,
hills or wires `in all directions` name no way."""


def every_way_named(text: str) -> bool:
    """The description says its ways lead in every compass direction: each is worth a try, though some may be blocked
    (`directions_named` leaves the phrase out: it names no direction in particular)."""
    return _EVERY_WAY.search(text.lower()) is not None


def tries_something(command: str) -> bool:
    """The command tries something on the game world: it is no move, look round, inventory or wait (those are how
    play gets about and lets time pass, whatever it is after)."""
    canonical = canonical_command(command)
    routine = canonical in ROUTINE_COMMANDS or is_wait(command) or direction_of(command) is not None
    return bool(canonical) and not routine


def is_observation(command: str) -> bool:
    """The command only observes (`look`, `examine carpet`, `listen`, `inventory`, `wait`...)."""
    words = read_command(command).words
    return bool(words) and words[0] in OBSERVATION_VERBS


INTERPRETER_ESCAPE = "\\"
"""Jericho's dumb-frotz input reads a backslash as an escape (frotz/src/dumb/dumb_input.c): `\\U`, `\\N` and `\\X` are
the undo, restart and quit hot keys, `\\_` ends the line, and a line starting with `\\` and a lower-case letter is an
interpreter setting that Jericho loops on forever (measured: `\\U` and `take \\N` crash the process, `\\s` hangs
it). No game command needs one."""


def why_invalid(command: str) -> str | None:
    """Why a text cannot be a command at all: too long, not printable ASCII (a NUL byte hangs the emulator), or
    holding the interpreter's escape character."""
    if len(command) > MAX_COMMAND_LENGTH:
        return f"longer than {MAX_COMMAND_LENGTH} characters"
    if any(not (char.isprintable() and char.isascii()) for char in command):
        return "holds a character that is not printable ASCII"
    if INTERPRETER_ESCAPE in command:
        return "holds a backslash, which the interpreter reads as a hot key (undo, restart, quit)"
    return None


def why_not_run(command: str) -> str | None:
    """Why a command must never reach the emulator (None: it may run). The one check every path goes through; a
    step that holds the command's `Command` reads its `refusal` instead of checking again."""
    for part in _SUB_COMMANDS.split(command):
        words = words_in(part)
        if words and words[0] in INTERPRETER_VERBS:
            return f"'{words[0]}' is an interpreter command (files, restart, quit or undo): the harness never runs it"
    return why_invalid(command)


class CommandRefused(Exception):
    """A command that must never reach the emulator (why_not_run) was about to."""


def refuse_unrunnable(command: str) -> None:
    """Raise CommandRefused for a command that must never reach an emulator (why_not_run): the last line of defence
    of every emulator the session plays a command on, as the orchestrator refuses these first."""
    reason = read_command(command).refusal
    if reason is not None:
        raise CommandRefused(f"{command[:40]!r}: {reason}")


class CommandFileError(ValueError):
    """A file of commands that cannot be read, or holds a line that is no command; the message names the line."""


def read_command_file(path: str | Path) -> list[str]:
    """The commands of a file, one per line (`--actions`, a walkthrough beside a story file); blank lines and `#`
    comments are layout, not steps. A file that is not UTF-8 text, or a line that is no command (control characters,
    a NUL byte, too long), is a CommandFileError naming the line: such text must never reach the emulator.
    Interpreter commands (`save`...) load, and are refused when their turn comes."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise CommandFileError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise CommandFileError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    commands = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        problem = why_invalid(line.strip())
        if problem is not None:
            raise CommandFileError(f"{path}, line {number}: {problem}")
        commands.append(line)
    return commands
