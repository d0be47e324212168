"""Is what the LLM agent is shown true? Every claim of every agent prompt, checked against the game.

    uv run python -m benchmarks.context_truth [--games DIR] [--game NAME ...] [--turns N] [--kinds optimal,noisy]
                                              [--out DIR] [--jobs N]

Each game's walkthrough (`optimal`) and a noisy walkthrough (`noisy`: playthroughs/trajectories.py, factor 1, seed 1,
cached as the corpus benchmark caches its trajectories: playthroughs/trajectory_cache.py) is played through the LLM path
as `playthroughs.llm_path` plays it: the real `openai` client against a scripted server on 127.0.0.1 that replies with
the next step. Games without a walkthrough (lgop) play the commands of an offline episode instead (the offline agent and
critic, the same configuration), replayed through the LLM path. The agent prompt of every turn is kept (the first
request of the turn: a retry shows the same state), and afterwards a second emulator, the truth, steps the commands the
episode ran (its records), checking each prompt's claims against the game as it stood at that prompt (after the commands
of the turns before). Questions are asked of a copy, a third emulator restored to the truth's state, so the truth is
never disturbed:

- room: the game names it so (a line of its answer to `look`, or the title it last printed in this room; what it
  appends, ", in the boat" or "(in the bed)", is allowed), and `(too dark to see)` exactly when that answer says
  it is dark (session.outcomes.DARK_PHRASES);
- carried: each name appears in the game's answer to `inventory` (the block is that answer, in the new format);
- seen: the name was printed while the player was in this room, and `examine <name>` is not answered with "not
  here", an unknown word or darkness;
- exits that worked: the direction moves the player to a room of the claimed title;
- description: its lines are the room's lines of the latest description printed here (the new format: of the one
  printed as many turns ago as its label says); a line the game printed there in passing (a look right after
  does not print it) is false, and so is a line from an older description;
- suggested exits: the share that move the player at all (a figure, not a verdict).

Writes context_truth.md (per game and kind, totals, examples of false claims) and context_truth.json (every count
and every false claim) to --out, with the command and the commit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import re
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loguru import logger

from agents.prompts import (
    CARRY,
    DARK,
    DESCRIPTION,
    EXIT_SEPARATOR,
    EXITS_MENTIONED,
    EXITS_WORKED,
    NO_TITLE,
    NOW,
    SEEN,
    WHERE,
    role_of,
)
from benchmarks import cli
from managers.game_reader import IDLE_COMMAND, room_line
from playthroughs.llm_path import measure
from playthroughs.trajectories import Trajectory
from playthroughs.trajectory_cache import GENERATOR_VERSIONS, build, cached
from session.commands import LOOK_COMMANDS, OPPOSITE, direction_of, normalize_command, why_not_run
from session.config import ConfigError, GameConfiguration
from session.emulator import SHADOW
from session.jericho_session import JerichoSession
from session.outcomes import DARK_PHRASES, PARSER_PHRASES, empty_handed, not_here, title_like
from session.provenance import commit
from session.records import EVENTS_FILE, read_record_dicts
from session.story_file import STORY_SUFFIXES, StoryFileError, start_emulator
from session.tables import markdown_table

CATEGORIES = ("room", "carried", "seen", "exits_worked", "description", "future_text")
COVERAGE = ("room_named", "inventory_shown", "description_fresh", "way_back")
"""What a prompt should show and may leave out (checked on every prompt where the game takes commands): the room's
name when `look` prints a title; the inventory when the game lists something carried; a description at most
FRESH_TURNS old (or as `look` prints it now) when `look` prints one; the way back among the exits that work, when
the last turn walked in and the reversed move leads back now."""
FRESH_TURNS = 5
COUNTED = (*CATEGORIES, *COVERAGE)
"""Every count an audit keeps, claims and coverage."""
"""Claims that must all be true; suggested exits are a share, reported apart."""
KINDS = ("optimal", "noisy")
NOISY_FACTOR, NOISY_SEED = 1, 1
OFFLINE_TURNS = 400
"""Turns of the offline episode whose commands stand in for a walkthrough a game does not have (lgop)."""
OFFLINE_VERSION = 1
"""Bump when the offline stand-in is built differently: its cached commands are then rebuilt."""
UNSEEDED_GAME_SEED = 1
"""The emulator's seed for a game whose Jericho bindings give none (see `episode_seed`)."""
EXAMPLES_SHOWN = 3
"""False claims shown per game, kind and category in the Markdown (the JSON keeps them all)."""
DARK_CLAIM = DARK
NONE_PRINTED = "(none printed)"
"""What the old format shows for a room whose description was never printed."""
_ASKS_WHICH = "do you mean"
"""A parser asking which of two things is meant has found the thing: the claim that it is here holds."""
_DECORATION = "<>()* \t"
"""Around a printed title (`<< Chief's office >>`, `(lab center)`): not part of the name. A line in square
brackets (`[press space to continue]`) is an aside, never a title."""
_STATUS_GAP = re.compile(r"\s{3,}")
"""A status line printed into the text (lgop: `Joe's Bar` and a wide gap before `Score: 0`) names the room in its
first cell."""
_APPENDED = (",", "(")
"""What the game appends to a title starts so (`Dam Base, in the magic boat`, `Bedroom (in the bed)`)."""


# -- the prompt's claims -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PromptFormat:
    """The labels of the agent prompt's state block (docs: /work/notes/prompt_format.md)."""

    name: str
    where: str
    description: re.Pattern
    """The description's label line; its `age` group, when the format has one, says when it was printed."""
    carried: str
    carried_is_answer: bool
    """True: the lines under the label are the game's answer to `inventory`; False: names on the label's line."""
    seen: str
    worked: str
    named: str
    ends_at_blank: bool
    """A block ends at a blank line (and at the next label, always)."""


OLD_FORMAT = PromptFormat(
    name="old",
    where="WHERE YOU ARE: ",
    description=re.compile(r"Description \(as last printed in full here\):$"),
    carried="You carry: ",
    carried_is_answer=False,
    seen="You can see: ",
    worked="Exits that worked from here: ",
    named="Named in the description, not tried yet: ",
    ends_at_blank=False,
)
NEW_FORMAT = PromptFormat(
    name="new",
    where=f"{WHERE} ",
    description=re.compile(
        rf"{DESCRIPTION} \((?:printed (?P<age>this turn|1 turn ago|\d+ turns ago)|(?P<now>{re.escape(NOW)}))\):"
        r"(?: in the (?:last response|opening text) below\.| in the game's opening above\.)?$"
    ),
    carried=CARRY,
    carried_is_answer=True,
    seen=f"{SEEN} ",
    worked=f"{EXITS_WORKED} ",
    named=f"{EXITS_MENTIONED} ",
    ends_at_blank=True,
)
"""The labels agents.prompts renders today (imported: the auditor reads what the renderer writes)."""
_TURN_LINE = re.compile(r"^TURN (\d+)(?: of \d+)?\.", re.MULTILINE)
"""The state block's first line (after the game's opening, which stands above it)."""


class PromptError(Exception):
    """A text that is no agent prompt (no `TURN N.` line first)."""


@dataclass(frozen=True)
class Claims:
    """What one agent prompt says about the game."""

    turn: int
    format: str
    room: str | None = None
    description: str | None = None
    description_age: int | None = None
    """Turns since the description was printed (new format; 0: the last response printed it)."""
    description_now: bool = False
    """The description is claimed to be the room as `look` prints it now."""
    carried: tuple[str, ...] | None = None
    """Old format: the names listed (`("nothing",)` when none)."""
    carried_answer: str | None = None
    """New format: the block under the label."""
    seen: tuple[str, ...] = ()
    worked: tuple[tuple[str, str], ...] = ()
    """(direction, room title) of each exit that worked."""
    named: tuple[str, ...] = ()
    """Directions the text suggests, not tried yet."""


def turn_of(prompt: str) -> int:
    match = _TURN_LINE.search(prompt)
    if not match:
        raise PromptError(f"no 'TURN N.' line in the prompt: {prompt[:60]!r}")
    return int(match.group(1))


def parse_prompt(prompt: str) -> Claims:
    """The claims of an agent prompt, in the old format (f4eedf1) or the new one, whichever its labels are."""
    turn = turn_of(prompt)
    lines = prompt.splitlines()
    fmt = (
        NEW_FORMAT
        if any(line.startswith(NEW_FORMAT.carried) or NEW_FORMAT.description.match(line) for line in lines)
        else OLD_FORMAT
    )
    labels = (fmt.where, fmt.carried, fmt.seen, fmt.worked, fmt.named)
    found: dict[str, Any] = {}
    for index, line in enumerate(lines):
        match = fmt.description.match(line)
        if match and "description" not in found:
            found["description"] = _block(lines, index + 1, labels, fmt)
            age = match.groupdict().get("age")
            found["description_age"] = None if age is None else 0 if age == "this turn" else int(age.split()[0])
            found["description_now"] = bool(match.groupdict().get("now"))
            if line.endswith(("below.", "above.")):  # a pointer: the text it points to is the game's own
                del found["description"]
            continue
        for label in labels:
            if line.startswith(label) and label not in found:
                found[label] = (
                    line[len(label) :]
                    if label != fmt.carried or not fmt.carried_is_answer
                    else _block(lines, index + 1, labels, fmt)
                )
    worked = _list(found.get(fmt.worked, ""), exits=True)
    carried = found.get(fmt.carried)
    return Claims(
        turn=turn,
        format=fmt.name,
        room=_room_claim(found.get(fmt.where, "")),
        description=found.get("description"),
        description_age=found.get("description_age"),
        description_now=found.get("description_now", False),
        carried=None if carried is None or fmt.carried_is_answer else tuple(_list(carried)),
        carried_answer=carried if fmt.carried_is_answer else None,
        seen=tuple(_list(found.get(fmt.seen, ""))),
        worked=tuple(worked) if worked != [("none yet", "")] else (),
        named=tuple(_list(found.get(fmt.named, ""))),
    )


def _room_claim(text: str) -> str | None:
    """The room the prompt names (None: it names none, as when the game printed no title)."""
    claim = text.strip()
    return None if not claim or claim == NO_TITLE else claim


def _block(lines: list[str], start: int, labels: tuple[str, ...], fmt: PromptFormat) -> str:
    """The lines from `start` to the next label (or blank line, in formats whose blocks end there)."""
    taken = []
    for line in lines[start:]:
        if line.startswith(labels) or fmt.description.match(line) or (fmt.ends_at_blank and not line.strip()):
            break
        taken.append(line)
    return "\n".join(taken).strip()


def _list(text: str, exits: bool = False) -> list:
    """`a, b.` -> [a, b]; with `exits`, `north -> X, south -> Y.` -> [(north, X), (south, Y)]."""
    body = text.strip().removesuffix(".")
    if not body:
        return []
    if not exits:
        return [name.strip() for name in body.split(", ") if name.strip()]
    # the new format separates exits with EXIT_SEPARATOR (a title may hold a comma) and names no room it never saw
    parts = (
        body.split(EXIT_SEPARATOR)
        if EXIT_SEPARATOR.strip() in body or " -> " not in body
        else re.split(r", (?=[^,]*? -> )", body)
    )
    return [(d.strip(), room.strip()) for d, _, room in (part.partition(" -> ") for part in parts)]


# -- the checks (plain text in, a verdict out) ---------------------------------------------------------------------
@dataclass(frozen=True)
class ClaimCheck:
    """What the game says of one claim of a prompt: true, false (and what it says instead), or nothing to go by."""

    true: bool | None
    """None: the game gave nothing to check the claim against."""
    truth: str = ""
    """What the game says instead (for a false claim)."""


def squeeze(text: str) -> str:
    """Whitespace collapsed to single spaces."""
    return " ".join(text.split())


def _lower(text: str) -> str:
    return squeeze(text).lower()


def is_dark(answer: str) -> bool:
    """The game says the player cannot see: a dark phrase (session.outcomes.DARK_PHRASES) and no room title (the
    title of wishbringer's lit Twilight Glen comes before "it's almost too dark to see")."""
    text = answer.lower()
    return any(phrase in text for phrase in DARK_PHRASES) and printed_title(answer) is None


def parser_refused(answer: str) -> bool:
    """The parser did not take the command (an unknown word, a missing noun); asking which thing is meant is not
    a refusal (the thing is in sight)."""
    text = answer.lower()
    return any(phrase in text for phrase in PARSER_PHRASES) and _ASKS_WHICH not in text


def lead_line(answer: str) -> str:
    """The answer's first line of its own: past the `>` prompt and a status line printed into the text (lgop)."""
    for line in answer.splitlines():
        text = line.strip()
        if text and text != ">" and not _STATUS_GAP.search(text):
            return text
    return ""


def refused(answer: str, name: str) -> bool:
    """The answer to `examine <name>` says the thing is not in sight, or the parser did not take the words. Only
    its first sentence counts, and of session.outcomes.not_here's "can't see" only "can't see any" and "can't see
    <the name's last word>": "You can't see inside, since the drawer is closed" speaks of a drawer in sight."""
    first = re.split(r"(?<=[.!?])\s", lead_line(answer), maxsplit=1)[0].lower()
    noun = name.lower().split()[-1] if name.split() else "any"
    unseen = re.search(rf"can.t see (any|{re.escape(noun)})\b", first)
    return bool(not_here(first) and (unseen or not re.search(r"can.t see", first))) or parser_refused(first)


def title_of_line(line: str) -> str | None:
    """The title a line prints, without decoration, when it reads as one (session.outcomes.title_like, whatever the
    case of its first letter: seastalker prints `(lab center)`)."""
    text = _STATUS_GAP.split(line.strip())[0].strip(_DECORATION).strip()
    return text if text and title_like(text[0].upper() + text[1:]) else None


def names_room(claim: str, line: str) -> bool:
    """`line` prints the room `claim` names: the same words, or those followed by what the game appends."""
    cell = _STATUS_GAP.split(line.strip())[0]
    wanted, printed = _lower(claim.strip(_DECORATION)), _lower(cell.strip(_DECORATION))
    if not wanted:
        return False
    return printed == wanted or (printed.startswith(wanted) and printed[len(wanted) :].lstrip()[:1] in _APPENDED)


def printed_title(text: str, room_name: str = "") -> str | None:
    """The room title a text prints: the line naming `room_name` (the truth's own name for the room, or its title
    as printed before) when there is one, else the last title-like line followed by prose (a banner's title lines
    are followed by more title lines or by its release line, and come before the room's; a last short line with no
    full stop, murdac's `The door is locked`, is followed by nothing). A status line printed into the text (lgop)
    is no title: the room's title line follows it."""
    lines = [line for line in text.splitlines() if line.strip() and not _STATUS_GAP.search(line.strip())]
    if room_name:
        named = next((line for line in lines if names_room(room_name, line)), None)
        if named is not None:
            return named.strip()
    found = None
    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if title_of_line(line) and following and not title_of_line(following):
            found = line.strip()
    return found


def check_room(claim: str, look_answer: str, last_title: str | None, taking_commands: bool = True) -> ClaimCheck:
    """The room claim against the game's answer to `look` (on a copy) and the title it last printed in this room.
    When the game is not taking commands (a "press a key" or yes/no prompt eats the `look`), only that title."""
    if any(names_room(claim, line) for line in look_answer.splitlines()):
        return ClaimCheck(True)
    if not taking_commands:
        return ClaimCheck(True) if last_title and names_room(claim, last_title) else ClaimCheck(None)
    if is_dark(look_answer):
        dark = next((line for line in look_answer.splitlines() if is_dark(line)), look_answer)
        return ClaimCheck(claim == DARK_CLAIM, f"dark: {squeeze(dark)}")
    if claim == DARK_CLAIM:
        return ClaimCheck(False, f"not dark: {_first_lines(look_answer)}")
    if last_title and names_room(claim, last_title):
        return ClaimCheck(True)
    if parser_refused(look_answer) and not last_title:
        return ClaimCheck(None)
    title = printed_title(look_answer) or last_title
    return ClaimCheck(False, f"the game prints {title!r}" if title else f"look: {_first_lines(look_answer)}")


def check_carried_name(name: str, inventory_answer: str) -> ClaimCheck:
    """One name of the old `You carry:` list against the game's answer to `inventory`."""
    if name == "nothing":
        return ClaimCheck(empty_handed(inventory_answer), f"inventory: {_first_lines(inventory_answer)}")
    found = re.search(rf"(?<!\w){re.escape(_lower(name))}(?!\w)", _lower(inventory_answer))
    return ClaimCheck(bool(found), f"inventory: {_first_lines(inventory_answer)}")


def check_carried_answer(block: str, inventory_answer: str, idle_answer: str = "") -> ClaimCheck:
    """The new format's block: the game's answer to `inventory`, whitespace aside, possibly cut with ` …`, and
    possibly without its last lines when they are the clock's (`idle_answer`, the answers to other turn-taking
    commands from the same state, prints them too)."""
    shown = squeeze("\n".join(_own_lines(block)))
    clock = {squeeze(line) for line in idle_answer.splitlines() if line.strip()}
    lines = _own_lines(inventory_answer)
    for end in range(len(lines), 0, -1):
        answer = squeeze("\n".join(lines[:end]))
        if shown == answer or (shown.endswith("…") and answer.startswith(shown.removesuffix("…").rstrip())):
            return ClaimCheck(True)
        if squeeze(lines[end - 1]) not in clock:
            break
    return ClaimCheck(False, f"inventory: {_first_lines(inventory_answer, 300)}")


def _own_lines(text: str) -> list[str]:
    """The lines of an answer, not the `>` prompt nor a status line printed into the text (lgop), as lead_line
    reads them."""
    return [
        line
        for line in text.splitlines()
        if line.strip() and line.strip() != ">" and not _STATUS_GAP.search(line.strip())
    ]


def check_seen(name: str, printed_here: str, examine_answer: str | None, dark: bool = False) -> ClaimCheck:
    """A `You can see` name: printed while the player was in this room, the room is not dark, and `examine` finds
    it there now (None: the game takes no command now). `printed_here` is that text, lower-cased and squeezed (see
    `RoomRecord`)."""
    if not re.search(rf"(?<!\w){re.escape(_lower(name))}(?!\w)", printed_here):
        return ClaimCheck(False, "never printed while the player was in this room")
    if dark:
        return ClaimCheck(False, "the room is dark")
    if examine_answer is None:
        return ClaimCheck(None)
    if refused(examine_answer, name):
        return ClaimCheck(False, f"examine {name}: {_first_lines(examine_answer)}")
    return ClaimCheck(True)


def check_exit(claimed_room: str, moved: bool, answer: str, destination_titles: list[str], dark: bool) -> ClaimCheck:
    """An exit that worked: from a copy it moves the player (`moved`: the room id changed) to a room the game calls
    `claimed_room` (a line of the move's answer or of a look there, or a title printed there earlier)."""
    if not moved:
        # the direction as the prompt wrote it: enchanter knows `sw`, not `southwest`
        return ClaimCheck(False, f"does not move the player: {_first_lines(answer)}")
    if not claimed_room or any(names_room(claimed_room, title) for title in destination_titles):
        return ClaimCheck(True)
    if dark:
        return ClaimCheck(None)  # dark there now (Inform prints "Darkness"): its name cannot be read, only remembered
    title = next((t for t in destination_titles if title_of_line(t)), "")
    return ClaimCheck(False, f"leads to {title.strip()!r}" if title else f"leads to: {_first_lines(answer)}")


@dataclass(frozen=True)
class Description:
    """A description the game printed in a room: its lines from the title on, and which of them were passing
    events (a look right after did not print them)."""

    turn: int
    lines: tuple[str, ...]
    events: frozenset[str] = frozenset()

    @property
    def room_lines(self) -> tuple[str, ...]:
        return tuple(line for line in self.lines if line not in self.events)


def description_of(
    response: str, title: str | None, look_after: str, arrived_or_looked: bool, first: bool = False
) -> Description | None:
    """The description `response` prints, if any (turn left 0): from the line naming the room (`title`) on, or,
    on arrival or `look`, the whole answer in a dark room or in a room whose title the game never prints (murdac).
    Lines that `look_after`, a look right after, does not print are passing events (unless that look printed
    nothing usable), except, in the `first` description printed in the room, the line right after the title:
    the text many games print on a first visit only (hhgg's Engine Room, ztuu's Souvenir Stand); in a room
    without a title, its first line."""
    lines = response.splitlines()
    start = next(
        (
            i
            for i, line in enumerate(lines)
            if title and names_room(title, line) and not _STATUS_GAP.search(line.strip())
        ),
        None,
    )
    if start is None and not (arrived_or_looked and (is_dark(response) or not title)):
        return None
    kept = tuple(squeeze(line) for line in lines[start or 0 :] if line.strip())
    usable = bool(look_after.strip()) and not parser_refused(look_after)
    looked = {squeeze(line) for line in look_after.splitlines()}
    if start is None:  # no title: the first line plays its part (murdac's brief "You are in the cellar")
        own = kept[0] if kept and not is_dark(response) else None
    else:  # the body under the title: a first visit's own wording, or the room told as it changes (room_line)
        body = kept[1] if len(kept) > 1 else None
        own = body if body is not None and (first or (usable and room_line(body, look_after, body=True))) else None
    events = frozenset(line for line in kept if usable and line not in looked and line != own)
    return Description(0, kept, events)


def check_description(block: str, printed: list[Description], age: int | None, turn: int) -> ClaimCheck:
    """The description block of the prompt of `turn` against the descriptions printed in this room (oldest first):
    the latest (old format), or the one printed `age` turns before the last response (new format)."""
    if block.strip() == NONE_PRINTED:
        return ClaimCheck(not printed, f"printed at turn {printed[-1].turn}" if printed else "")
    if age is None:
        target = printed[-1] if printed else None
        where = "in this room"
    else:
        wanted = turn - 1 - age
        target = next((d for d in reversed(printed) if d.turn == wanted), None)
        where = f"in this room at turn {wanted} ({age} turns before the last response)"
    if target is None:
        latest = f"; the latest here is from turn {printed[-1].turn}" if printed else ""
        return ClaimCheck(False, f"no description was printed {where}{latest}")
    shown = [squeeze(line) for line in block.splitlines() if line.strip()]
    room_lines = target.room_lines
    for index, line in enumerate(shown):
        if _printed_line(line, index == len(shown) - 1, room_lines):
            continue
        event = next((d for d in reversed(printed) if line in d.events), None)
        if event is not None:
            return ClaimCheck(False, f"a passing event of turn {event.turn}, not the room: {line!r}")
        older = next((d for d in reversed(printed) if d is not target and line in d.lines), None)
        if older is not None:
            return ClaimCheck(
                False,
                f"stale: {line!r} was printed at turn {older.turn}; at turn {target.turn}: "
                f"{' / '.join(room_lines)[:300]!r}",
            )
        return ClaimCheck(False, f"not printed here as a description: {line!r}")
    return ClaimCheck(True) if shown else ClaimCheck(False, "empty")


def _printed_line(line: str, last: bool, printed: tuple[str, ...] | list[str]) -> bool:
    """A shown line (squeezed) is one of `printed`, or, when it is the block's `last` and cut with `…`, the start of
    one."""
    stem = line.removesuffix("…").rstrip()
    return line in printed or (last and line.endswith("…") and any(text.startswith(stem) for text in printed))


def check_current_description(block: str, look_answer: str) -> ClaimCheck:
    """A description shown as `look` prints it now: every line is a line of that answer (the last may be cut)."""
    shown = [squeeze(line) for line in block.splitlines() if line.strip()]
    answer = [squeeze(line) for line in look_answer.splitlines() if line.strip()]
    for index, line in enumerate(shown):
        if not _printed_line(line, index == len(shown) - 1, answer):
            return ClaimCheck(False, f"`look` does not print {line!r} now: {_first_lines(look_answer)}")
    return ClaimCheck(True) if shown else ClaimCheck(False, "empty")


def future_lines(block: str, idle_answer: str, printed: set[str]) -> list[str]:
    """Lines of a prompt's block that are the game's clock's next words: what a turn-taking command that does
    nothing (`wait`, on a copy) is answered with, and the game never printed before this prompt."""
    own = lead_line(idle_answer)  # the idle command's own answer ("Time passes."), not the clock's
    clock = {squeeze(line) for line in idle_answer.splitlines() if line.strip() and line.strip() != own}
    return [
        line
        for line in (squeeze(line) for line in block.splitlines() if line.strip())
        if line in clock and line not in printed
    ]


def _first_lines(text: str, limit: int = 160) -> str:
    shown = " / ".join(line.strip() for line in text.splitlines() if line.strip())
    return shown[:limit] + (" …" if len(shown) > limit else "")


# -- the game as it stood at each prompt ---------------------------------------------------------------------------
@dataclass
class RoomRecord:
    """What the game printed while the player was in one room."""

    printed: str = ""
    """Every response printed here, lower-cased and squeezed (for `seen`)."""
    descriptions: list[Description] = field(default_factory=list)
    title: str | None = None
    """The room's title as a look here last printed it."""


@dataclass(frozen=True)
class Finding:
    turn: int
    category: str
    claim: str
    true: bool | None
    truth: str = ""


class Auditor:
    """Steps the truth emulator along an episode's records and checks each prompt against it.

    Call `audit(prompt)` for the prompt of the next turn (optional), then `advance(record)` with that turn's record.
    """

    def __init__(self, story: Path, seed: int | None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.truth = JerichoSession(story, seed=seed)
            self.probe = start_emulator(story, seed, SHADOW)
        self.probe.reset()
        self.view = self.truth.reset()
        self.turn = 1
        """The turn whose prompt is checked next (the state is after the commands of the turns before)."""
        self.rooms: dict[int | None, RoomRecord] = {}
        self.last_title: str | None = None
        """The title the game last printed since the player came into this room."""
        self.desync: list[int] = []
        """Turns whose response the truth did not print as the episode did (the truth is off the episode's track)."""
        self.named_tried: dict[tuple[int | None, str], bool] = {}
        """(room, direction) -> whether it moved the player, the first time a prompt suggested it."""
        self._state = self.truth.env.get_state()
        self._answers: dict[str, tuple[str, int | None]] = {}
        self.came: tuple[str, int | None] | None = None
        """(the reversed move, the room it came from) when the last turn walked the player into this room."""
        self.printed: set[str] = set()
        """Every line the game printed so far (squeezed)."""
        self._take_in(self.view.text, arrived=True, looked=False)

    # -- probing a copy ----------------------------------------------------------------------------------------
    def ask(self, command: str) -> tuple[str, int | None]:
        """The game's answer to `command` from the state at this prompt, and the room the player is in after it
        (played on the probe emulator; the same question is asked once per prompt)."""
        if command not in self._answers:
            if why_not_run(command) is not None:
                return "", self.view.room_id
            self.probe.set_state(self._state)
            text = self.probe.step(command)[0]
            self._answers[command] = (text, self._room_of_probe())
        return self._answers[command]

    def taking_commands(self) -> bool:
        """Whether the game reads commands at this prompt: at a "press a key" or yes/no prompt the first key of any
        command is the answer, and `look` and `inventory` are answered alike."""
        return lead_line(self.ask("look")[0]) != lead_line(self.ask("inventory")[0])

    def examine(self, name: str) -> str:
        """The answer to `examine <name>`; when it is refused (the parser does not know `bird's`, Inform matches no
        `pair of 1 foot diameter sewer pipes`), to `examine <its last word>`, then `examine <its first word>`
        (hhgg's `thing your aunt gave you which you don't know what it is`): a printed name need not be one the
        parser reads whole."""
        answer = self.ask(f"examine {name}")[0]
        words = [re.sub(r"[^\w-]", "", word) for word in name.split()]
        for word in dict.fromkeys(w for w in (words[-1:] + words[:1]) if w and w != name):
            if not refused(answer, name):
                break
            answer = self.ask(f"examine {word}")[0]
        return answer

    def _room_of_probe(self) -> int | None:
        return self.truth.player_room(self.truth.objects.snapshot(self.probe._get_ram(), self.probe._get_special_ram()))

    def _move(self, direction: str) -> tuple[bool, str, list[str], bool]:
        """(moved, answer, what names the destination, dark there) for `direction` from here, on the probe."""
        answer, room = self.ask(direction)
        moved = room is not None and room != self.view.room_id
        if not moved:
            return False, answer, [], False
        self.probe.set_state(self._state)
        self.probe.step(direction)
        look = self.probe.step("look")[0]
        names = answer.splitlines() + look.splitlines()
        known = self.rooms.get(room, RoomRecord()).title
        unlit = any(phrase in look.lower() for phrase in DARK_PHRASES)  # "Darkness" titled or not
        return True, answer, names + ([known] if known else []), unlit

    # -- the episode -------------------------------------------------------------------------------------------
    def advance(self, record: dict) -> None:
        """The truth steps the command of this turn's record (when the episode ran it)."""
        if record["turn"] != self.turn:
            raise ValueError(f"record of turn {record['turn']} where turn {self.turn} was due")
        self.turn += 1
        if not record.get("ran", True):
            self.came = None
            return
        before = self.view.room_id
        self.view = self.truth.step(record["command"])
        direction = direction_of(record["command"])
        moved = None not in (before, self.view.room_id) and before != self.view.room_id
        self.came = (OPPOSITE[direction], before) if moved and direction in OPPOSITE else None
        if self.view.text.strip() != str(record["response"]).strip():
            self.desync.append(record["turn"])
        self._state, self._answers = self.truth.env.get_state(), {}
        looked = normalize_command(record["command"]) in LOOK_COMMANDS
        self._take_in(self.view.text, arrived=self.view.room_id != before, looked=looked)

    def _take_in(self, response: str, arrived: bool, looked: bool) -> None:
        room = self.rooms.setdefault(self.view.room_id, RoomRecord())
        if arrived:
            self.last_title = None
        look = self.ask("look")[0]
        if not is_dark(look):
            room.title = printed_title(look, self.view.room_name) or room.title
        room.printed += " " + _lower(response)
        self.printed |= {squeeze(line) for line in response.splitlines() if line.strip()}
        title = printed_title(response, room.title or "")
        if title and (not room.title or names_room(room.title, title)):  # not a clock line (sherlock)
            self.last_title = title
        described = description_of(response, room.title, look, arrived or looked, not room.descriptions)
        if described is not None:
            room.descriptions.append(Description(self.turn - 1, described.lines, described.events))

    # -- one prompt --------------------------------------------------------------------------------------------
    def audit(self, prompt: str) -> list[Finding]:
        claims = parse_prompt(prompt)
        if claims.turn != self.turn:
            raise PromptError(f"the prompt of turn {claims.turn} where turn {self.turn} was due")
        room = self.rooms[self.view.room_id]
        found: list[Finding] = []

        def add(category: str, claim: str, verdict: ClaimCheck) -> None:
            found.append(Finding(self.turn, category, claim, verdict.true, verdict.truth))

        live = self.taking_commands()
        if claims.room is not None:
            add("room", claims.room, check_room(claims.room, self.ask("look")[0], self.last_title, live))
        if claims.description is not None and claims.description_now:
            verdict = check_current_description(claims.description, self.ask("look")[0]) if live else ClaimCheck(None)
            add("description", claims.description, verdict)
        elif claims.description is not None:
            verdict = check_description(claims.description, room.descriptions, claims.description_age, self.turn)
            add("description", claims.description, verdict)
        for block in (claims.description, claims.carried_answer) if live else ():
            future = future_lines(block or "", self.ask(IDLE_COMMAND)[0], self.printed)
            for line in (squeeze(line) for line in (block or "").splitlines() if line.strip()):
                add(
                    "future_text",
                    line,
                    ClaimCheck(line not in future, "the game's clock prints it after the next command"),
                )
        inventory = self.ask("inventory")[0]
        if live:
            look = self.ask("look")[0]
            title = printed_title(look, self.view.room_name)
            if title and not is_dark(look):
                add("room_named", title, ClaimCheck(claims.room is not None, "no room named"))
                age = claims.description_age
                fresh = claims.description_now or (age is not None and age <= FRESH_TURNS)
                add("description_fresh", title, ClaimCheck(fresh, f"age {age}" if age is not None else "none shown"))
            if self.came is not None and self.ask(self.came[0])[1] == self.came[1]:
                shown = any(direction_of(direction) == self.came[0] for direction, _ in claims.worked)
                add("way_back", self.came[0], ClaimCheck(shown, "the way back is not among the exits"))
            if not empty_handed(inventory) and not parser_refused(inventory):
                add("inventory_shown", lead_line(inventory), ClaimCheck(claims.carried_answer is not None, "not shown"))
        for name in claims.carried or ():
            add("carried", name, check_carried_name(name, inventory) if live else ClaimCheck(None))
        if claims.carried_answer is not None:
            clock = self.ask(IDLE_COMMAND)[0] + "\n" + self.ask("look")[0]  # both take a turn from here too
            verdict = check_carried_answer(claims.carried_answer, inventory, clock) if live else ClaimCheck(None)
            add("carried", claims.carried_answer, verdict)
        for name in claims.seen:
            dark = live and is_dark(self.ask("look")[0])
            add("seen", name, check_seen(name, room.printed, self.examine(name) if live else None, dark))
        for direction, title in claims.worked:
            moved, answer, names, dark = self._move(direction)
            verdict = check_exit(title, moved, answer, names, dark) if live else ClaimCheck(None)
            add("exits_worked", f"{direction} -> {title}", verdict)
        for direction in claims.named if live else ():
            moved = self._move(direction)[0]
            self.named_tried.setdefault((self.view.room_id, direction), moved)
            add("suggested_exits", direction, ClaimCheck(moved, "" if moved else "does not move the player"))
        return found


# -- playing an episode through the LLM path -----------------------------------------------------------------------
def play(
    story: Path, commands: list[str], config_path: Path, folder: Path, seed: int | None = None
) -> tuple[dict[int, str], list[dict], dict]:
    """The commands played through the LLM path: (agent prompt by turn, the episode's records, its figures).
    `seed`: the emulator's, when the configuration's is not to be used."""
    prompts: dict[int, str] = {}

    def keep(messages: list[dict]) -> None:
        if role_of(messages) == "agent":
            prompt = str(messages[-1].get("content", ""))
            try:
                prompts.setdefault(turn_of(prompt), prompt)
            except PromptError:
                pass  # a retry after an unusable reply: its user message is the retry rule, not a prompt

    overrides = {"gameplay": {"seed": seed}} if seed is not None else None
    figures = measure(story, commands, config_path, folder, more_overrides=overrides, listen=keep)
    records = read_record_dicts(next(folder.rglob(EVENTS_FILE)).parent)
    return prompts, records, figures


def audit_episode(story: Path, prompts: dict[int, str], records: list[dict], seed: int | None) -> dict:
    """Every prompt's findings, and the figures of the audit."""
    auditor = Auditor(story, seed)
    findings: list[Finding] = []
    for record in records:
        if auditor.turn in prompts:
            findings += auditor.audit(prompts[auditor.turn])
        auditor.advance(record)
    chars = [len(text) for text in prompts.values()]
    counts = {c: Counter() for c in (*COUNTED, "suggested_exits")}
    for finding in findings:
        counts[finding.category]["checked" if finding.true is not None else "unverifiable"] += 1
        counts[finding.category]["false" if finding.true is False else "ok"] += finding.true is not None
    distinct = auditor.named_tried
    return {
        "prompts": len(prompts),
        "prompt_chars_mean": round(sum(chars) / len(chars)) if chars else 0,
        "prompt_chars_max": max(chars, default=0),
        "desync_turns": auditor.desync,
        "counts": {c: {k: counts[c][k] for k in ("checked", "false", "unverifiable")} for c in COUNTED},
        "suggested_exits": {
            "shown": counts["suggested_exits"]["checked"],
            "lead_somewhere": counts["suggested_exits"]["checked"] - counts["suggested_exits"]["false"],
            "distinct": len(distinct),
            "distinct_lead_somewhere": sum(distinct.values()),
        },
        "false_claims": [
            {"turn": f.turn, "category": f.category, "claim": f.claim, "truth": f.truth}
            for f in findings
            if f.true is False and f.category in CATEGORIES
        ],
    }


# -- what is played ------------------------------------------------------------------------------------------------
def offline_commands(story: Path, config_path: str, turns: int) -> Trajectory:
    """The commands an offline episode (the offline agent and critic) plays: a game's stand-in walkthrough."""
    from orchestration.wiring import RunOptions, build_orchestrator

    with tempfile.TemporaryDirectory() as folder:
        overrides = {
            "gameplay": {"agent": "offline", "critic": "offline", "max_turns_per_episode": turns},
            "files": {"episode_dir": folder},
            "knowledge": {"enabled": False},
        }
        config = GameConfiguration.from_toml(config_path, overrides)
        config.gameplay.seed = episode_seed(story, config.gameplay.seed)  # the same commands every time
        summary = build_orchestrator(config, RunOptions(rom=str(story), quiet=True)).play_episode()
        records = read_record_dicts(summary.parent)
    game = JerichoSession(story).game_name
    return Trajectory(game, "offline", f"offline episode, {turns} turns", [r["command"] for r in records])


def trajectory(story: Path, kind: str, config_path: str, cache: Path) -> Trajectory | None:
    """What is played for `kind`: the walkthrough, the noisy walkthrough, or (no walkthrough) an offline episode's
    commands (for `optimal` only)."""
    if kind == "noisy":
        built = build(story, {"noisy"}, [NOISY_FACTOR], [NOISY_SEED], [], cache)
        return built[0] if built else None
    built = build(story, {"optimal"}, [], [], [], cache)
    if built:
        return built[0]
    key = hashlib.md5(story.read_bytes()).hexdigest()[:12]
    path = cache / f"{story.stem}-{key}-offline-v{OFFLINE_VERSION}-{OFFLINE_TURNS}.json"
    return cached(path, lambda: offline_commands(story, config_path, OFFLINE_TURNS))


def episode_seed(story: Path, configured: int | None) -> int | None:
    """The configured seed, else the game's walkthrough seed, else UNSEEDED_GAME_SEED: a game Jericho has no seed
    for (lgop) draws other random numbers in every emulator, and the truth would part from the episode."""
    if configured is not None:
        return configured
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        session = JerichoSession(story)
    seeded = (session.env.bindings or {}).get("seed") is not None
    session.close()
    return None if seeded else UNSEEDED_GAME_SEED


def run_job(job: dict) -> dict | None:
    """One game and kind: played, audited; None when the game has nothing to play for this kind."""
    logger.remove()
    warnings.simplefilter("ignore")
    story, config_path = Path(job["story"]), job["config"]
    started = time.perf_counter()
    played = trajectory(story, job["kind"], config_path, Path(job["cache"]))
    if played is None:
        return None
    commands = played.commands[: job["turns"]] if job["turns"] else played.commands
    seed = episode_seed(story, GameConfiguration.from_toml(config_path).gameplay.seed)
    with tempfile.TemporaryDirectory() as folder:
        prompts, records, figures = play(story, commands, Path(config_path), Path(folder), seed)
    audit = audit_episode(story, prompts, records, seed)
    return {
        "game": story.stem,
        "kind": job["kind"],
        "played": played.kind,
        "variant": played.variant,
        "commands": len(commands),
        "turns": figures["turns"],
        "termination_reason": figures["termination_reason"],
        "score": figures["score"],
        "clean_score": played.clean_score if not job["turns"] else None,
        "refused_or_replaced": sum(r["command"] != c for r, c in zip(records, commands)),
        **audit,
        "seconds": round(time.perf_counter() - started, 1),
    }


def run(jobs: list[dict], workers: int) -> list[dict]:
    rows = []
    if workers > 1 and len(jobs) > 1:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            for row in pool.imap_unordered(run_job, jobs):
                rows.append(row)
                _progress(row)
    else:
        for job in jobs:
            rows.append(run_job(job))
            _progress(rows[-1])
    return sorted((r for r in rows if r), key=lambda r: (r["game"], r["kind"]))


def _progress(row: dict | None) -> None:
    if row:
        bad = sum(row["counts"][c]["false"] for c in CATEGORIES)
        print(
            f"  {row['game']} {row['kind']}: {row['turns']} turns, {bad} false claims, {row['seconds']} s",
            file=sys.stderr,
            flush=True,
        )


# -- tables --------------------------------------------------------------------------------------------------------
def totals(rows: list[dict]) -> dict:
    """Every count summed over the rows (one kind)."""
    summed = {c: Counter() for c in COUNTED}
    exits: Counter = Counter()
    for row in rows:
        for c in COUNTED:
            summed[c].update(row["counts"].get(c, {}))
        exits.update(row["suggested_exits"])
    prompts = sum(r["prompts"] for r in rows)
    return {
        "games": len(rows),
        "turns": sum(r["turns"] for r in rows),
        "prompts": prompts,
        "counts": {c: dict(summed[c]) for c in COUNTED},
        "suggested_exits": dict(exits),
        "suggested_exits_share": round(exits["lead_somewhere"] / exits["shown"], 3) if exits["shown"] else None,
        "prompt_chars_mean": round(sum(r["prompt_chars_mean"] * r["prompts"] for r in rows) / max(prompts, 1)),
        "prompt_chars_max": max((r["prompt_chars_max"] for r in rows), default=0),
        "desync_games": [r["game"] for r in rows if r["desync_turns"]],
    }


def _cell(counts: dict) -> str:
    checked, false = counts.get("checked", 0), counts.get("false", 0)
    unverifiable = f" (+{counts['unverifiable']} ?)" if counts.get("unverifiable") else ""
    return (f"**{false:,}** / {checked:,}" if false else f"0 / {checked:,}") + unverifiable


def _covered(counts: dict) -> str:
    """`98.7% of 1,234`: the share of the prompts that should show a thing and did."""
    checked = counts.get("checked", 0)
    if not checked:
        return "-"
    return f"{(checked - counts.get('false', 0)) / checked:.1%} of {checked:,}"


def _share(exits: dict) -> str:
    shown = exits.get("shown", 0)
    if not shown:
        return "-"
    return (
        f"{exits['lead_somewhere'] / shown:.0%} of {shown:,} "
        f"({exits.get('distinct_lead_somewhere', 0)}/{exits.get('distinct', 0)} distinct)"
    )


TABLE_COLUMNS = (
    "game",
    "played",
    "turns",
    "room",
    "carried",
    "seen",
    "exits worked",
    "description",
    "future text",
    "suggested exits lead somewhere",
    "chars mean / max",
    "room named",
    "inventory shown",
    "description fresh",
    "way back shown",
)
"""The columns of a kind's table: the game and its run, a false / checked cell per category (CATEGORIES), the
suggested exits, the prompt's size, a covered share per COVERAGE category."""


def markdown(rows: list[dict], meta: dict) -> str:
    lines = [
        "# Is what the agent is shown true? (benchmarks/context_truth.py)",
        "",
        f"Command: `{meta['command']}`  ",
        f"Commit: {meta['commit']}; {meta['wall_seconds']} s on {meta['workers']} worker(s).",
        "",
        "Each cell: **false** / checked claims; `(+N ?)`: claims the game gave nothing to check against "
        "(not counted). Suggested exits: the share that move the player at all (distinct room and direction "
        "pairs in brackets). Chars: the agent prompt (user message) per turn, mean / max. Future text: lines "
        "of the description or the inventory that the game's clock prints after the next command and the game had "
        "not printed yet. Room named, inventory shown, description fresh: the share of the prompts where `look` "
        f"prints a title (the inventory lists something) that name the room, show the inventory, show a "
        f"description at most {FRESH_TURNS} turns old or as `look` prints it now; way back shown: of the prompts "
        "after a move whose reverse leads back, the share that list it among the exits that work.",
        "",
        f"Played: `optimal` the Jericho walkthrough; `noisy` the noisy walkthrough ({meta['noisy']}); `offline` "
        f"(games without a walkthrough) the commands of an offline episode of at most {meta['offline_turns']} "
        "turns (offline agent and critic), replayed through the LLM path. Each run ends where the episode "
        "ended (its termination reason in brackets). How each claim is checked: the docstring of "
        "benchmarks/context_truth.py; a description's age N (new format) means the response of turn "
        "TURN - 1 - N.",
        "",
    ]
    for kind in sorted({r["kind"] for r in rows}, key=KINDS.index):
        mine = [r for r in rows if r["kind"] == kind]
        total = totals(mine)
        games = []
        for r in mine:
            desync = f" (desync at {r['desync_turns'][0]})" if r["desync_turns"] else ""
            games.append(
                (
                    r["game"],
                    r["played"],
                    f"{r['turns']} ({r['termination_reason']}){desync}",
                    *(_cell(r["counts"][c]) for c in CATEGORIES),
                    _share(r["suggested_exits"]),
                    f"{r['prompt_chars_mean']:,} / {r['prompt_chars_max']:,}",
                    *(_covered(r["counts"].get(c, {})) for c in COVERAGE),
                )
            )
        summed = (
            f"**all {total['games']}**",
            "",
            f"{total['turns']:,}",
            *(_cell(total["counts"][c]) for c in CATEGORIES),
            _share(total["suggested_exits"]),
            f"{total['prompt_chars_mean']:,} / {total['prompt_chars_max']:,}",
            *(_covered(total["counts"][c]) for c in COVERAGE),
        )
        lines += [f"## {kind}", "", *markdown_table(TABLE_COLUMNS, games, totals=[summed]), ""]
    lines += ["## False claims (at most " + str(EXAMPLES_SHOWN) + " per game, kind and category; all in the JSON)", ""]
    for r in rows:
        by_category: dict[str, list[dict]] = {}
        for claim in r["false_claims"]:
            by_category.setdefault(claim["category"], []).append(claim)
        if not by_category:
            continue
        lines += [f"### {r['game']} ({r['kind']})", ""]
        for category in CATEGORIES:
            for claim in by_category.get(category, [])[:EXAMPLES_SHOWN]:
                claimed, truth = _quoted(claim["claim"]), _quoted(claim["truth"])
                lines.append(f"- {category}, turn {claim['turn']}: {claimed} — {truth}")
        lines.append("")
    return "\n".join(lines)


def _quoted(text: str, limit: int = 240) -> str:
    text = squeeze(text).replace("|", "/").replace("`", "'")
    return "`" + (text[:limit] + " …" if len(text) > limit else text) + "`"


# -- the command line ----------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_games(parser)
    parser.add_argument("--game", action="append", default=[], metavar="NAME", help="a story name (file stem); repeat")
    parser.add_argument("--turns", type=int, help="play at most this many steps of each (default: all)")
    parser.add_argument("--kinds", default="optimal", help="optimal, noisy, or both (comma-separated)")
    cli.add_out(parser, default="docs/results", help="folder for context_truth.md and context_truth.json")
    cli.add_config(parser)
    cli.add_cache(parser)
    cli.add_jobs(parser)
    args = parser.parse_args(argv)
    try:
        stories, kinds = _inputs(args)
    except (ConfigError, StoryFileError, ValueError) as exc:
        return cli.fail(exc)
    started = time.perf_counter()
    jobs = [
        {"story": str(s), "kind": k, "turns": args.turns, "config": args.config, "cache": args.cache}
        for k in kinds
        for s in stories
    ]
    rows = run(jobs, args.jobs)
    meta = {
        "command": "uv run python -m benchmarks.context_truth " + " ".join(sys.argv[1:] if argv is None else argv),
        "commit": commit(),
        "wall_seconds": round(time.perf_counter() - started, 1),
        "workers": args.jobs,
        "noisy": f"factor {NOISY_FACTOR}, seed {NOISY_SEED}",
        "offline_turns": OFFLINE_TURNS,
        "generator_versions": GENERATOR_VERSIONS,
    }
    summary = {kind: totals([r for r in rows if r["kind"] == kind]) for kind in kinds}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = ",\n".join(json.dumps(row, separators=(",", ":")) for row in rows)  # one run per line: diffs stay readable
    (out / "context_truth.json").write_text(
        f'{{"meta": {json.dumps(meta)},\n"totals": {json.dumps(summary)},\n"runs": [\n{runs}\n]}}\n'
    )
    (out / "context_truth.md").write_text(markdown(rows, meta))
    print(json.dumps({"wall_seconds": meta["wall_seconds"], "totals": summary}, indent=1))
    print(f"wrote {out / 'context_truth.md'} and {out / 'context_truth.json'}")
    return 0


def _inputs(args: argparse.Namespace) -> tuple[list[Path], list[str]]:
    """The story files and kinds asked for; ValueError (or a config/story error) on anything unusable."""
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise ValueError(f"--kinds {args.kinds}: expected some of {', '.join(KINDS)}")
    if args.turns is not None and args.turns < 1:
        raise ValueError(f"--turns {args.turns}: must be at least 1")
    if args.jobs < 1:
        raise ValueError(f"--jobs {args.jobs}: must be at least 1")
    GameConfiguration.from_toml(args.config)
    folder = Path(args.games)
    if not folder.is_dir():
        raise StoryFileError(f"--games {folder}: not a folder of story files")
    stories = sorted(p for p in folder.iterdir() if p.suffix.lower() in STORY_SUFFIXES)
    wanted = [name for given in args.game for name in given.split(",") if name]
    missing = sorted(set(wanted) - {p.stem for p in stories})
    if missing:
        raise StoryFileError(f"no story file named {', '.join(missing)} in {folder}")
    stories = [p for p in stories if not wanted or p.stem in wanted]
    if not stories:
        raise StoryFileError(f"no story files (.z1-.z8) in {folder}")
    return stories, kinds


if __name__ == "__main__":
    sys.exit(main())
