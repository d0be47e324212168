"""The Jericho session: one Z-machine, read through its memory (room id, score, inventory, objects)."""

from __future__ import annotations

import hashlib
import os
import re
import struct
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from loguru import logger

from session.commands import (
    DIRECTIONS,
    CommandFileError,
    canonical_command,
    direction_of,
    read_command,
    read_command_file,
)
from session.emulator import DEFAULT_TIME_LIMIT, LIVE, SHADOW, Emulator, EmulatorFailed, EmulatorHung, Observation
from session.events import EventType
from session.outcomes import printed_title
from session.records import GameObject, GameView, noun_of
from session.status import (
    SCORE_COMMAND,
    ScoreReading,
    closing_question,
    full_score,
    read_ending,
    read_score_answer,
    status_globals,
    without_status_line,
)
from session.story_file import UnplayableStory, check_header
from session.zmachine import (
    ObjectTable,
    WorldSnapshot,
    attributes_set,
    dictionary_addresses,
    object_vocabulary,
)

_T = TypeVar("_T")

ZORK1_MD5 = "b732a93a6244ddd92a9b9a3e3a46c687"
NOISE_PROBES = ("look", "inventory", "examine me", "xyzzy plugh", "take me", "verbose", "wait")
"""Harmless commands whose outcomes, compared from one state, show which globals hold the parser's words and the
clock rather than the world (see `noisy_globals`)."""
LISTING_PROBES = ("look", "inventory")
"""Two idle commands that list different things: what they leave differently is the library's bookkeeping of what
it printed (see `listing_attributes`). Both take a turn alike, so a clock moves the same way in each."""
TEXT, MEMORY, HASHED = 0, 1, 2
"""What a command played on the shadow gives back (`JerichoSession._on_copy`), each more than the one before: the
game's answer; with what it left (`Observation`: the room); with the world hash too (`Trial.changed`)."""
INVENTORY_COMMAND = "inventory"
PLAYER_NAMES = frozenset({"yourself", "you", "me", "myself", "self", "self object", "player", "protagonist"})
"""What games call the player's own object (Inform's `(self object)` and `yourself`, Infocom's `you`, `player`)."""
DROP_ALL = "drop all"
"""The probe that shows which object is the player without naming anything (`_find_dropper`)."""
IDLE_COMMAND = "look"
"""One turn that changes nothing: what the world does meanwhile on its own (clocks, NPCs) is not the player's doing.
`look` takes exactly one turn in every game of the corpus; `wait` takes 3 to 10 in Infocom games."""
SHADOW_HANGS_ALLOWED = 3
"""Hangs of the shadow emulator an episode waits out (each costs the time limit); after them its probes are skipped
unplayed for the rest of the episode, so a game whose C core loops on its probes from many states is not played at
the pace of one time limit a turn. A crash costs a fresh emulator (tens of ms) and is never given up on."""
ROOMS_CONTAINER_MIN_CHILDREN = 16
"""A parentless object holding at least this many objects, above the player's room at the start, is the rooms
container of an Infocom game (ZIL's ROOMS); Inform games keep rooms parentless, with few objects inside each."""


RNG_STATE = 7
"""Where `FrotzEnv.get_state()` keeps the random-number generator's state."""
NEXT_OPCODE = 6
"""Where `FrotzEnv.get_state()` keeps the opcode the machine runs next: the input it waits for."""
READ_LINE = 228
"""The Z-machine's `read` (a line of input), as opposed to READ_CHAR."""
READ_CHAR = 246
"""The Z-machine's `read_char`: the game waits for one key."""
OPENING_KEYS = 3
"""Keys given at most to a game without bindings that opens waiting for one (a title screen, then an epigraph)."""
WALKTHROUGH_SUFFIX = ".walkthrough"
"""A walkthrough for a game Jericho has none for: `game.walkthrough` beside `game.z8`."""
STORY_SUFFIXES = frozenset({".z1", ".z2", ".z3", ".z4", ".z5", ".z7", ".z8"})
"""File suffixes of the Z-machine story files a folder of games holds."""


class Trial:
    """What a command would do from the current state, played on the shadow emulator (`JerichoSession.trial`)."""

    def __init__(self, text: str, room: Callable[[], int | None], changed: Callable[[], bool]):
        self.text = text
        """The game's answer, as a player typing the command would read it."""
        self._room = room
        self._changed = changed

    @cached_property
    def room_id(self) -> int | None:
        """The room the player is in after it (None: unknown). Read on demand, only before the live game moves
        on: the pre-check never reads it."""
        return self._room()

    @cached_property
    def changed(self) -> bool:
        """The command changed the room, the score, what the player holds, the world (as `GameView.world_hash`
        tells it apart) or ended the game. Moves are left out: Infocom games count a turn for "You can't see any lamp
        here!". Read on demand (it costs more than the step), and only before the live game moves on. True when
        the shadow emulator failed while it was read: a change that cannot be ruled out."""
        return self._changed()


@dataclass(frozen=True)
class Fingerprint:
    """What a restored game must equal: where the player is, the score, what it holds, the object tree and
    the globals, every one of them (the noisy ones a game changes each turn too), and whether the game has ended."""

    room: int | None
    score: int
    inventory: tuple[int, ...]
    """Object numbers the player holds, in the game's order."""
    tree: str
    """MD5 of every object's parent, sibling, child and attributes (the whole table, past Jericho's object cap)."""
    globals: str
    """MD5 of the 240 global variables."""
    ended: tuple[bool, bool]
    """(game over, victory)."""

    @classmethod
    def of(
        cls, world: WorldSnapshot, room: int | None, score: int, player: int, ended: tuple[bool, bool]
    ) -> Fingerprint:
        """The fingerprint of `world`, read in a room with a score; `player` is the player's object number."""
        return cls(
            room=room,
            score=score,
            inventory=tuple(world.contents(player)) if player else (),
            tree=tree_digest(world),
            globals=hashlib.md5(world.globals.tobytes()).hexdigest(),
            ended=ended,
        )


def tree_digest(world: WorldSnapshot) -> str:
    """MD5 of every object's parent, sibling, child and attributes (the whole table, past Jericho's object cap)."""
    tree = hashlib.md5(world.parents.tobytes())
    for part in (world.siblings, world.children, world.attributes):
        tree.update(part.tobytes())
    return tree.hexdigest()


@dataclass(frozen=True, eq=False)
class Snapshot:
    """The game right after one turn, as `JerichoSession.restore` brings it back. Plain data: it outlives the
    emulator it was taken on and restores on any session of the same story file."""

    story_md5: str
    commands: tuple[str, ...]
    """Every command the emulator ran since reset, in order; the last is the turn this snapshot follows."""
    anchor: tuple | None
    """`FrotzEnv.get_state()` the latest command read as a line ran from (None: the reset): `restore` plays the
    commands from there. Most often the state the last command ran from; see `restore` for why not always."""
    anchor_turn: int
    """How many commands had run at the anchor."""
    state: str
    """`state_digest` of the emulator after the last command: what a restore must reach."""
    view: GameView
    """What the last command (or the reset) gave: `restore` gives it back."""
    room: int | None
    """The room the session last saw the player in (it tells arrivals apart)."""
    titles: tuple[tuple[int, str], ...]
    """The room titles the session had learnt (`JerichoSession._titles`), so that later views read the same."""
    fingerprint: Fingerprint
    """What the restored game equals (the state digest holds all of it, and the rest of memory)."""
    reading: tuple[ScoreReading, bool, int | None]
    """What the session had read of the score without Jericho's bindings (the last reading, whether any, the
    maximum printed): a restored game is read as it was at the snapshot, not with what was printed after it."""

    @property
    def turn(self) -> int:
        """Commands run since reset."""
        return len(self.commands)

    @property
    def size(self) -> int:
        """Bytes of data held: the anchor's memory, stack and text, the response, the commands and the titles (the
        view's world arrays are shared with the view the session returned)."""
        anchor = self.anchor[0].nbytes + self.anchor[1].nbytes + len(self.anchor[-1]) if self.anchor else 0
        return (
            anchor + len(self.view.text) + sum(len(c) + 1 for c in self.commands) + sum(len(t) for _, t in self.titles)
        )


class Restored(StrEnum):
    """How `JerichoSession.restore` brought a snapshot back."""

    STATE = "state"
    """The emulator set to the snapshot's anchor, and the commands since played again (most often just the last)."""
    REPLAY = "replay"
    """A fresh emulator reset and every command since reset played again, as `--resume` does."""


class RestoreError(Exception):
    """A snapshot that cannot be brought back on this session: another story file, or a state neither way reaches."""


def state_digest(state: tuple) -> str:
    """MD5 of what the Z-machine runs on in `FrotzEnv.get_state()`: dynamic memory, the live part of the stack, the
    registers (pc, sp, fp, frame count, next opcode) and the random-number generator. The stack below its pointer is
    left out: what an earlier, deeper call left there is never read again (a reset leaves it behind)."""
    ram, stack, pc, sp, fp, frame_count, opcode, rng, _narrative = state
    digest = hashlib.md5(ram.tobytes())
    digest.update(stack[2 * sp :].tobytes())  # sp counts 16-bit words
    digest.update(repr((pc, sp, fp, frame_count, opcode, tuple(int(n) for n in rng))).encode())
    return digest.hexdigest()


class StoryFileError(Exception):
    """The story file is missing or is not a Z-machine game Jericho can run."""


class CommandRefused(Exception):
    """A command that must never reach the emulator (session.commands.why_not_run) was about to."""


def check_story_bytes(path: Path) -> bytes:
    """The story file's bytes; a clear StoryFileError for one whose header would crash, hang or exit Jericho's C
    core and so the whole process (session.story_file says which, and why each rule is there)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise StoryFileError(f"cannot read story file {path}: {exc.strerror}") from None
    try:
        check_header(data)
    except UnplayableStory as exc:
        raise StoryFileError(f"{path} {exc}") from None
    return data


def _internal_name(name: str) -> bool:
    """A short name no player is shown: empty, `(in parentheses)`, with_underscores or camelCase."""
    internal_word = "_" in name or (" " not in name and bool(_CAMEL.search(name)))  # not `ProjCon Office`
    return not name or (name.startswith("(") and name.endswith(")")) or internal_word


def _readable(name: str) -> str:
    """`(Alike_Maze_1)` -> `Alike Maze 1`, `(gnomeRoom)` -> `gnome Room`."""
    return _CAMEL.sub(lambda m: m.group(1) + " " + m.group(2), name.strip("()").replace("_", " ")).strip()


_CAMEL = re.compile(r"([a-z])([A-Z])")


def _walkers(before: WorldSnapshot, after: WorldSnapshot) -> list[int]:
    """Objects that went from one room straight into another: their parent changed, and both parents hang from the
    same place (parentless, as Inform's rooms, or one rooms container, as Infocom's)."""
    changed = np.nonzero(before.parents != after.parents)[0] + 1
    return [
        int(num)
        for num in changed
        if (old := before.parent(int(num)))
        and (new := after.parent(int(num)))
        and before.parent(old) == after.parent(new)
        and not before.parent(new) == int(num)  # not into something it held
    ]


def start_emulator(path: Path, seed: int | None, role: str = LIVE, time_limit: float = DEFAULT_TIME_LIMIT) -> Emulator:
    """A new FrotzEnv, in a process of its own (session.emulator). Jericho copies its C library to a temporary
    folder for every emulator: a full disk there is a StoryFileError (one clear line), not a traceback."""
    try:
        return Emulator(path, seed, role, time_limit)
    except OSError as exc:
        raise StoryFileError(f"cannot start the Z-machine emulator for {path.name}: {exc.strerror or exc}") from None


def resolve_story_file(cli_rom: str | None, config_path: str) -> Path:
    """`--rom`, else `ZORK_ROM`, else the configured `game_file_path`; a clear error when it is not there."""
    for origin, candidate in (("--rom", cli_rom), ("ZORK_ROM", os.environ.get("ZORK_ROM")), ("config", config_path)):
        if candidate:
            path = Path(candidate).expanduser()
            if not path.is_file():
                raise StoryFileError(
                    f"story file not found: {path} (from {origin}). "
                    f"Put zork1.z5 (md5 {ZORK1_MD5}) at {config_path}, or pass --rom PATH, or set ZORK_ROM=PATH."
                )
            return path
    raise StoryFileError(f"no story file given: put zork1.z5 (md5 {ZORK1_MD5}) at games/zork1.z5 or set ZORK_ROM.")


class JerichoSession:
    """Wraps `jericho.FrotzEnv`: short verbs, no hidden state beyond the emulator and the last response.

    Both emulators (the live game and the shadow) run in processes of their own (session.emulator), each call
    within `time_limit` seconds. A crash or a hang of the shadow skips the probe it played (`probe_failures` counts
    them; the next probe starts a fresh shadow); one of the live game raises EmulatorFailed, which ends the episode.
    """

    def __init__(self, story_file: str | Path, seed: int | None = None, time_limit: float = DEFAULT_TIME_LIMIT):
        path = Path(story_file)
        if not path.is_file():
            raise StoryFileError(f"story file not found: {path}. Put zork1.z5 (md5 {ZORK1_MD5}) there.")
        story = check_story_bytes(path)
        self.time_limit = time_limit
        """Seconds each call to an emulator may take (session.emulator.DEFAULT_TIME_LIMIT says why its default)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.env = start_emulator(path, seed, LIVE, time_limit)
        self.supported = bool(self.env.is_fully_supported)
        """Jericho has bindings for this story file (its score, moves, player and endings); without them the session
        reads what every Z-machine game shows a player (session.status)."""
        if not self.supported or caught:
            logger.warning(
                f"{path.name} has no Jericho bindings: score, moves, room and endings are read as a player sees them"
            )
        self.story_file = path
        self.story_md5 = hashlib.md5(story).hexdigest()
        self.game_name = (self.env.bindings or {}).get("name", path.stem)
        self.version = story[0]
        self.objects = ObjectTable(story)
        self.player = int(self.env.player_obj_num or 0) if self.supported else 0
        """The player's object number; found by walking (`_find_walker`) when Jericho has no bindings."""
        self._jericho_max = self.env.get_max_score()
        """The game's maximum score as Jericho's bindings know it, read once: the summary of an episode whose
        emulator crashed needs it too (`max_score`)."""
        self.rooms_container = 0
        """The object holding every room (Infocom games), or 0 when rooms are parentless (Inform games)."""
        self._text = ""
        self._opening = ""
        """The text the game printed when it opened (reset)."""
        self._seed = seed
        self._shadow: Emulator | None = None
        self._before: Any = None
        """Emulator state the last command ran from (for `idle_world`)."""
        self._anchor: tuple[Any, int] = (None, 0)
        """The state the latest command read as a line ran from (None: the reset), and the commands run before it."""
        self._idle: tuple[WorldSnapshot | None] | None = None
        """`idle_world`'s answer this turn, once asked (None inside: the shadow failed)."""
        self._copies: tuple[tuple | None, dict[str, tuple[int, tuple[str, Observation] | None]]] = (None, {})
        """The live state the shadow last played commands from, and each command's answer from it with its detail
        (`_on_copy`)."""
        self.probe_failures: Counter[str] = Counter()
        """Probes skipped this episode because the shadow emulator crashed or hung, by probe (`idle_world`,
        `trial`, `noisy_globals`, `noise`, `find_player`)."""
        self._shadow_hangs = 0
        """The shadow's hangs this episode (SHADOW_HANGS_ALLOWED)."""
        self._dictionary: list[Any] | None = None
        self._titles: dict[int, str] = {}
        """Room id -> the title the game printed, for rooms whose object name is internal (`(Alike_Maze_1)`)."""
        self._room: int | None = None
        self._score = ScoreReading(0)
        """Without bindings: the score, maximum and moves the game last printed (its answer to `score`)."""
        self.max_known: int | None = None
        """Without bindings: the highest maximum score the game has printed (None: never)."""
        self.score_read = self.supported
        """The score was ever read: without bindings, from the status line's globals or an answer to `score`."""
        self.commands: list[str] = []
        """Every command the emulator ran since reset, in order (what `snapshot` keeps for a replay)."""
        self.view: GameView | None = None
        """What the last command (or the reset) gave."""

    # -- lifecycle ---------------------------------------------------------------------------------------
    def reset(self) -> GameView:
        if not self.env.alive:  # the last episode ended with a failure of the live emulator: start a fresh one
            self.env = self._start(LIVE)
        self._text = self._opening = self._answer(self._open())
        self._before, self._idle, self.commands, self._anchor = None, None, [], (None, 0)
        self.probe_failures, self._shadow_hangs = Counter(), 0
        self._room = None  # a new episode arrives in its first room, wherever the last one ended
        if not self.supported:
            self._score = ScoreReading(0)
            self.player = self._find_walker()
        self.rooms_container = self._find_rooms_container(self.world())
        self.view = self.observe()
        return self.view

    def _answer(self, text: str) -> str:
        """The game's answer as a player reads it: an unbound game's without the prompt and status line in it."""
        return text if self.supported else without_status_line(text, self.version)

    def _open(self) -> str:
        """Reset the emulator and return the opening text. A game Jericho has no bindings for that opens on a title
        screen waiting for one key (curses' `[Please press SPACE to begin.]`) is given it, as Jericho's bindings do
        for the games they know, at most OPENING_KEYS times: commands typed there would be lost keys."""
        text, _ = self.env.reset()
        for _ in range(0 if self.supported else OPENING_KEYS):
            if self.env.get_state()[NEXT_OPCODE] != READ_CHAR:
                break
            text += self.env.step("")[0]
        return text

    def step(self, command: str) -> GameView:
        """Run one command; the returned view carries the game's response as `text`."""
        reason = read_command(command).refusal
        if reason is not None:  # the orchestrator refuses these first: this is the last line of defence
            raise CommandRefused(f"{command[:40]!r}: {reason}")
        walked_from = self.world() if self._watching_for_walker(command) else None
        before, text, after = self.env.play(command)
        self._text = self._answer(text)
        self._before, self._idle = before, None
        if before[NEXT_OPCODE] == READ_LINE:
            self._anchor = (before, len(self.commands))
        self.commands.append(command)
        came_from = None
        if not self.supported and not self.player:  # the player's object is not known yet
            now = self.objects.snapshot(after.ram, after.special)
            if walked_from is not None:  # nothing walked from the start: did the player walk now?
                self.player = self._walker(walked_from, now, before)
                self.rooms_container = self._find_rooms_container(now) if self.player else 0
                came_from = self._origin(walked_from) if self.player else None
            elif self._moved_a_thing(now):
                # a game whose player never walks (one room): the first command that moved a thing may have put it
                # in the player's hands, and `drop all` then shows whose
                self.player = self._find_dropper(now, self.env.get_state())
                self.rooms_container = self._find_rooms_container(now) if self.player else 0
        self.view = self.observe(after.rng != tuple(before[RNG_STATE]), after, came_from)
        return self.view

    def _moved_a_thing(self, now: WorldSnapshot) -> bool:
        """The last command changed some object's parent."""
        last = self.view.world if self.view is not None else None
        return last is not None and bool((last.parents != now.parents).any())

    def _origin(self, world: WorldSnapshot) -> tuple[int, str] | None:
        """(room, title) the player walked from on the walk that showed which object the player is: until then the
        room was unknown. Its title is the first the opening printed, when the story file keeps no name for it."""
        room = world.room_of(self.player, self.rooms_container)
        if room is None:
            return None
        opening = next((t for line in self._opening.splitlines() if (t := printed_title(line))), "")
        if opening:
            self._titles.setdefault(room, opening)
        return room, self._room_title(self.env.observe(hashed=False).ram.tobytes(), room, arrived=False)

    def close(self) -> None:
        self.env.close()
        if self._shadow is not None:
            self._shadow.close()

    def _start(self, role: str) -> Emulator:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an unsupported game was reported when the session started
            return start_emulator(self.story_file, self._seed, role, self.time_limit)

    # -- reading the machine -----------------------------------------------------------------------------
    def world(self) -> WorldSnapshot:
        """The object tree, attributes and globals as they are in memory now."""
        now = self.env.observe(hashed=False)
        return self.objects.snapshot(now.ram, now.special)

    def observe(
        self, rolled_dice: bool = False, now: Observation | None = None, came_from: tuple[int, str] | None = None
    ) -> GameView:
        """The game as it stands; `rolled_dice`, `now` and `came_from` are for `step` to say whether the command drew
        random numbers, what the live emulator gave with the command's answer, and from which room a first walk came
        (GameView.came_from)."""
        now = now or self.env.observe(hashed=self.supported)
        world = self.objects.snapshot(now.ram, now.special)
        ram = now.ram.tobytes()  # names read a byte at a time: bytes index five times faster than an array
        room = self.player_room(world)
        held = world.contents(self.player) if self.player else []
        inventory = tuple(self._named(ram, num) for num in held)
        inside = tuple(self._named(ram, num) for container in held for num in world.contents(container))
        room_objects = tuple(self._named(ram, num) for num in self._descendants(world, room, depth=2))
        arrived, self._room = room != self._room, room
        if self.supported:
            score, moves, game_over, victory = now.score, now.moves, now.game_over, now.victory
        else:
            score, moves, game_over, victory = self._read_status(world)
        return GameView(
            room_id=room,
            room_name=self._room_title(ram, room, arrived) if room is not None else "(nowhere)",
            score=score,
            moves=moves,
            inventory=tuple(obj for obj in inventory if obj.name),
            room_objects=tuple(obj for obj in room_objects if obj.name),
            world_hash=self._world_hash(now, world),
            text=self._text,
            game_over=game_over,
            victory=victory,
            world=world,
            held_inside=tuple(obj for obj in inside if obj.name),
            rolled_dice=rolled_dice,
            unreadable=() if self.supported else tuple(self.unreadable()),
            came_from=came_from,
            unnamed=tuple(obj.num for obj in room_objects + inventory if not obj.name),
            unnamed_carried=tuple(obj.num for obj in inventory if not obj.name),
        )

    def _world_hash(self, now: Observation, world: WorldSnapshot) -> str:
        """`GameView.world_hash`: with Jericho's bindings, what the emulator worked out (their clean object tree and
        curated state bytes: `session.emulator.world_hash`); without them Jericho's tree is empty, so the whole object
        tree as memory holds it, links and attributes."""
        return now.world_hash if self.supported else tree_digest(world)

    def _read_status(self, world: WorldSnapshot) -> tuple[int, int, bool, bool]:
        """(score, moves, game over, victory) of a game Jericho has no bindings for, as a player sees them
        (session.status): the status line's globals in versions 1-3, else the game's answer to `score` played on
        the shadow emulator while the game reads commands; the ending, and then the final score, from the answer's
        own closing words. The maximum comes from the answers to `score`, asked in versions 1-3 only until one
        gives it, at the start and whenever the score changes."""
        shown = status_globals(self.objects.story, (int(world.globals[1]), int(world.globals[2])))
        if shown is not None:
            self._score = ScoreReading(shown[0], self._score.max_score, shown[1])
            self.score_read = True
        asked = bool(self.commands) and canonical_command(self.commands[-1]) == SCORE_COMMAND
        announced = not asked and full_score(self._text)
        if any(read_ending(self._text)) or announced:
            answer = read_score_answer(self._text)  # the closing words give the final score
        elif shown is None or (self.max_known is None and (self.view is None or self.view.score != shown[0])):
            answer = self._ask_score() if self.env.get_state()[NEXT_OPCODE] == READ_LINE else None
        else:
            answer = None
        if answer is not None:
            moves = answer.moves if answer.moves is not None else self._score.moves
            self._score = ScoreReading(answer.score if shown is None else shown[0], answer.max_score, moves)
            self.score_read = True
            if answer.max_score is not None:
                self.max_known = max(self.max_known or 0, answer.max_score)
        game_over, victory = read_ending(self._text, self._score.score, self.max_known)
        if (game_over or victory) and self._still_playing():
            game_over = victory = False
        moves = self._score.moves if self._score.moves is not None else len(self.commands)
        return self._score.score, moves, game_over, victory or announced

    def _still_playing(self) -> bool:
        """The game goes on after what read as its ending: asked `look` (on the shadow emulator), it describes a
        place, a title line and more, where a game that ended asks its closing question again, refuses ("Please give
        one of the answers above") or says nothing. Ballyhoo's `You have died` under the big top, zork1's
        resurrection: the player plays on. When the shadow cannot answer, the ending stands."""
        answer = self._on_copy(self.env.get_state(), IDLE_COMMAND, TEXT)
        if answer is None:
            return False
        lines = [line for line in self._answer(answer[0]).splitlines() if line.strip()]
        return len(lines) >= 2 and printed_title(lines[0]) is not None and not closing_question("\n".join(lines))

    def _ask_score(self) -> ScoreReading | None:
        """The game's answer to `score` from the live state, played on the shadow emulator (None: it could not)."""
        answer = self._on_copy(self.env.get_state(), SCORE_COMMAND, TEXT)
        return read_score_answer(answer[0]) if answer is not None else None

    def _room_title(self, ram: Any, room: int, arrived: bool) -> str:
        """What the game calls the room. The object's short name, unless it is an internal one (Inform's `(maze)`,
        `(Alike_Maze_1)`, `(gnomeRoom)`, or none): then the title line the game printed on arrival, else the name
        made readable; the first room read before any arrival is where the game opened, titled in its opening text
        (a one-room game whose player is found only once a thing moves)."""
        name = self.objects.short_name(ram, room).strip()
        if not _internal_name(name):
            return name
        source = self._text if arrived else self._opening if not self._titles else ""
        if room not in self._titles and source:
            title = next((t for line in source.splitlines() if (t := printed_title(line))), "")
            if title:
                self._titles[room] = title
        return self._titles.get(room) or _readable(name) or f"room {room}"

    def player_room(self, world: WorldSnapshot) -> int | None:
        """The room the player is in, even inside a vehicle or past Jericho's object cap; None when unknown.

        Version 1-3 games keep it in global 0 (the status line shows that object's name, Standard 8.2.2); later
        games are read from the object tree: the player's outermost container below the rooms container.
        """
        if self.version <= 3 and 0 < int(world.globals[0]) <= self.objects.count:
            return int(world.globals[0])
        return world.room_of(self.player, self.rooms_container)

    def idle_world(self) -> WorldSnapshot | None:
        """The world as one idle turn (IDLE_COMMAND) would have left it, from the state the last command ran from:
        what changed the same way is the game's own doing (a clock, an NPC), not the command's.

        Played on a shadow emulator, a second FrotzEnv with its own copy of the C core, so the game itself is never
        touched: Jericho's restore is not exact on every game (sherlock, and tryst205 at a "press a key" prompt,
        play differently after a step run and undone on the same emulator: `restore` says what its state leaves out).
        Computed once per turn, on demand. None when the shadow crashed or hung on it, as before the first command:
        every change then counts as the command's (managers.novelty).
        """
        if self._before is None:
            return None
        if self._idle is None:
            played = self._probe("idle_world", lambda shadow: shadow.play_from(self._before, IDLE_COMMAND))
            self._idle = (self.objects.snapshot(played[1].ram, played[1].special) if played else None,)
        return self._idle[0]

    def room_after(self, command: str) -> int | None:
        """The room `command` would lead to from here, played on the shadow emulator: the game is never touched."""
        trial = self.answer_on_copy(command)
        return trial.room_id if trial is not None else None

    def answer_on_copy(self, command: str) -> Trial | None:
        """`trial`, or None for a command that must never run (where `trial` raises CommandRefused) or that the
        shadow emulator could not play."""
        return None if read_command(command).refusal is not None else self.trial(command)

    def trial(self, command: str, refused: str | None = None) -> Trial | None:
        """What `command` would do from here, played on the shadow emulator from the live state: the game itself
        is never touched (see `idle_world` for why not undo on the live one); None when the shadow crashed or hung
        on it. Raises CommandRefused for what must never run (session.commands.why_not_run): `save` on the shadow
        would still write a file.

        `refused`: a command the game surely refuses (e.g. the verb with a word no game knows). What it leaves is
        no change either: some parsers mark the objects they weighed (gold), or count the first move (zork1)."""
        for line in (command, refused or ""):
            reason = read_command(line).refusal
            if reason is not None:
                raise CommandRefused(f"{line[:40]!r}: {reason}")
        state = self.env.get_state()
        played = self._on_copy(state, command, TEXT)
        if played is None:
            return None

        def room() -> int | None:
            again = self._on_copy(state, command, MEMORY)
            return self.player_room(self.objects.snapshot(again[1].ram, again[1].special)) if again else None

        def changed() -> bool:
            hashed = self._on_copy(state, command, HASHED)
            if hashed is None:
                return True
            footprint = self._footprint(hashed[1])
            if footprint == self._footprint(self.env.observe()):
                return False
            if refused is None:
                return True
            again = self._on_copy(state, refused, HASHED)
            return again is None or footprint != self._footprint(again[1])

        return Trial(self._answer(played[0]), room, changed)

    def _on_copy(self, state: tuple, command: str, detail: int) -> tuple[str, Observation] | None:
        """`command` played on the shadow emulator from the live `state`: the game's answer and what it left, as
        much as `detail` asks (TEXT, MEMORY, HASHED: the world hash costs more than the step, and the pre-check
        mostly reads the answer alone); None when the shadow crashed or hung on it. Each command is played once per
        state and detail: the pre-check and the lookahead try the same proposal, and the live emulator hands out the
        same state object until the game moves."""
        if self._copies[0] is not state:
            self._copies = (state, {})
        answers = self._copies[1]
        known, answer = answers.get(command, (-1, None))
        if known < detail and not (known >= 0 and answer is None):  # a failure is not tried again from this state
            answer = self._probe(
                "trial",
                lambda shadow: shadow.play_from(state, command, observe=detail >= MEMORY, hashed=detail >= HASHED),
            )
            answers[command] = (detail, answer)
        return answer

    def _footprint(self, now: Observation) -> tuple:
        """What a command that did nothing leaves as it was: room, score, what the player holds, the world hash
        and whether the game has ended."""
        world = self.objects.snapshot(now.ram, now.special)
        held = tuple(world.contents(self.player)) if self.player else ()
        hashed = self._world_hash(now, world)
        return self.player_room(world), now.score, held, hashed, now.game_over, now.victory

    def noisy_globals(self) -> frozenset[int]:
        """Globals that follow the command's words (the parser's verb and objects, "it") or the clock, not the world.

        Every probe runs from the current state on the shadow emulator: what one `wait` changes is the clock, and
        whatever differs between the probes' outcomes follows the command. Empty when the shadow crashed or hung on
        one: the novelty's own filters (a global a refused command or an idle turn changes) remain.
        """
        start = self.world().globals
        worlds = self._worlds_after("noisy_globals", NOISE_PROBES)
        if worlds is None:
            return frozenset()
        outcomes = [world.globals for world in worlds]
        waited = outcomes[-1]
        noisy = {int(g) for g in np.nonzero(waited != start)[0]}
        for outcome in outcomes[:-1]:
            noisy.update(int(g) for g in np.nonzero(outcome != waited)[0])
        return frozenset(noisy)

    def _worlds_after(self, name: str, probes: tuple[str, ...]) -> list[WorldSnapshot] | None:
        """The world each of `probes` leaves, each played from the current state on the shadow emulator (the probe
        `name`); None when the shadow crashed or hung on one."""
        state = self.env.get_state()
        worlds = []
        for probe in probes:
            played = self._probe(name, lambda shadow, probe=probe: shadow.play_from(state, probe))
            if played is None:
                return None
            worlds.append(self.objects.snapshot(played[1].ram, played[1].special))
        return worlds

    def noise(self) -> tuple[frozenset[int], frozenset[int]]:
        """(attribute numbers, object numbers) whose changes are not the world's: what Jericho's bindings strip
        (`jericho_noise`), or, for a game without bindings, the attributes its library sets while it lists things
        (`listing_attributes`)."""
        return self.jericho_noise() if self.supported else (self.listing_attributes(), frozenset())

    def listing_attributes(self) -> frozenset[int]:
        """Attribute numbers that LISTING_PROBES, played from the current state on the shadow emulator, leave
        differently: flags a game's library sets on what it prints (Inform 7 marks what a room description lists, so
        `look` and `read table` leave them otherwise than `inventory`), which no command changed in the world. Empty
        when the shadow crashed or hung on a probe."""
        worlds = self._worlds_after("listing_attributes", LISTING_PROBES)
        if worlds is None:
            return frozenset()
        outcomes = [world.attributes for world in worlds]
        differing = np.bitwise_or.reduce([outcomes[0] ^ other for other in outcomes[1:]])
        return attributes_set(np.bitwise_or.reduce(differing, axis=0))

    def jericho_noise(self) -> tuple[frozenset[int], frozenset[int]]:
        """(attribute numbers, object numbers) that Jericho's per-game bindings treat as noise in world state: the
        "touched" and "visited" attributes, NPCs that wander on their own (zork1's thief). Read by giving every
        object every attribute on the shadow emulator and seeing what `get_world_objects(clean=True)` strips.
        Jericho shows 32 attributes, so the mask covers attributes 0-31; unsupported games give nothing, and so does
        a shadow that crashed or hung on it."""
        state = list(self.env.get_state())
        layout = self.objects.layout

        def marked(shadow: Emulator) -> tuple[int, Any]:
            ram = state[0].copy()
            count = min(layout.count, int(shadow.frotz_lib.get_num_world_objs()))
            for index in range(count):
                entry = layout.first_entry + index * layout.entry_size
                ram[entry : entry + layout.attribute_bytes] = 0xFF
            shadow.set_state((ram, *state[1:]))
            return count, shadow.get_world_objects(clean=True)

        played = self._probe("jericho_noise", marked)
        if played is None:
            return frozenset(), frozenset()
        count, records = played
        attributes: set[int] = set()
        objects: set[int] = set()
        for num, obj in enumerate(records[1 : count + 1], start=1):
            stripped = {n for n, present in enumerate(obj.attr) if not present}
            if len(stripped) == len(obj.attr):
                objects.add(num)
            else:
                attributes |= stripped
        return frozenset(attributes), frozenset(objects)

    def _shadow_env(self) -> Emulator:
        """The shadow emulator; a fresh one when there is none yet or the last one failed."""
        if self._shadow is None or not self._shadow.alive:
            if self._shadow is not None:
                self._shadow.close()
            self._shadow = self._start(SHADOW)
            self._shadow.reset()
        return self._shadow

    def _probe(self, name: str, play: Callable[[Emulator], _T]) -> _T | None:
        """`play` on the shadow emulator; None when the shadow crashes or hangs on it: the probe is skipped and
        counted (`probe_failures`), and the next probe starts a fresh shadow (none after SHADOW_HANGS_ALLOWED
        hangs). A failure of the live emulator is raised: it ends the episode."""
        if self._shadow_hangs >= SHADOW_HANGS_ALLOWED:
            self.probe_failures[name] += 1
            return None
        try:
            return play(self._shadow_env())
        except EmulatorFailed as exc:
            if exc.emulator != SHADOW:
                raise
            if not self.probe_failures:
                logger.bind(event_type=EventType.EMULATOR_FAILED).warning(
                    f"{exc}: the {name} probe is skipped, and so is any other the shadow emulator fails this episode "
                    "(summary.json counts them by probe); the next probe starts a fresh shadow emulator"
                )
            self.probe_failures[name] += 1
            self._shadow_hangs += isinstance(exc, EmulatorHung)
            if self._shadow_hangs == SHADOW_HANGS_ALLOWED:
                logger.bind(event_type=EventType.EMULATOR_FAILED).warning(
                    f"the shadow emulator hung {SHADOW_HANGS_ALLOWED} times: its probes are skipped for the rest of "
                    "the episode"
                )
            return None

    def _find_walker(self) -> int:
        """The player's object in a game Jericho has no bindings for: the object that walks when the player walks.
        Every direction is tried from the start on the shadow emulator: the object that went from one room into
        another in most of them, and not on an idle turn (a character that wanders on its own, zork1's thief, moves
        on every turn), is the player. When no direction leads anywhere from the start (a bed, a dark cellar),
        `_find_holder`; else 0, and `step` watches the player's first walk."""
        state, start = self.env.get_state(), self.world()

        def moved_by(command: str) -> list[int]:
            played = self._probe("find_player", lambda shadow: shadow.play_from(state, command))
            return _walkers(start, self.objects.snapshot(played[1].ram, played[1].special)) if played else []

        on_their_own = set(moved_by(IDLE_COMMAND))
        walked = Counter(num for direction in DIRECTIONS for num in moved_by(direction) if num not in on_their_own)
        return self._likeliest_player(walked, start) if walked else self._find_holder(start, state)

    def _likeliest_player(self, walked: Counter[int], world: WorldSnapshot) -> int:
        """Of the objects that walked (how often), the player: followers walk along (temple's shadows, hhgg's Ford),
        so the one that walked most, then the one that calls itself the player, then the one holding most."""
        ram = self.env.observe(hashed=False).ram.tobytes()
        return max(walked, key=lambda num: (walked[num], self._self_named(ram, num), len(world.contents(num)), -num))

    def _find_dropper(self, world: WorldSnapshot, state: tuple) -> int:
        """The object `drop all` empties into its own parent (the player, dropping what it holds where it stands),
        when exactly one does; else 0. No thing needs a name for it: TextWorld's objects have none."""
        played = self._probe("find_player", lambda shadow: shadow.play_from(state, DROP_ALL))
        if played is None:
            return 0
        after = self.objects.snapshot(played[1].ram, played[1].special)
        moved = np.nonzero(world.parents != after.parents)[0] + 1
        droppers = {
            holder
            for num in moved
            if (holder := world.parent(int(num)))
            and world.parent(holder)
            and after.parent(int(num)) == world.parent(holder)
        }
        return droppers.pop() if len(droppers) == 1 else 0

    def _find_holder(self, world: WorldSnapshot, state: tuple) -> int:
        """The player's object when no way out of the start works (a bed, the dark, an opening scene): the object
        `drop all` empties into its room (`_find_dropper`), or the object in a room from which `drop <a thing it
        holds>` puts that thing in the room, else the one object in the status line's room (versions 1-3) or anywhere
        (later ones) that calls itself the player (PLAYER_NAMES); 0 when none tells (`step` then watches the
        player's first walk, and the first command that moves a thing)."""
        dropper = self._find_dropper(world, state)
        if dropper:
            return dropper
        ram = self.env.observe(hashed=False).ram.tobytes()
        for num in range(1, self.objects.count + 1):
            room = world.parent(num)
            held = [c for c in world.contents(num) if noun_of(self.objects.short_name(ram, c)).isalpha()]
            if not held or not room or world.parent(room) not in (0, world.parent(world.parent(room))):
                continue
            command = f"drop {noun_of(self.objects.short_name(ram, held[0]))}"
            played = self._probe("find_player", lambda shadow, command=command: shadow.play_from(state, command))
            if played is not None and self.objects.snapshot(played[1].ram, played[1].special).parent(held[0]) == room:
                return num
        here = int(world.globals[0]) if self.version <= 3 else None  # the status line's room, in versions 1-3
        named = [
            n
            for n in range(1, self.objects.count + 1)
            if self._self_named(ram, n)
            and world.parent(n)
            and (here is None or world.room_of(n, world.parent(here)) == here)
        ]
        return named[0] if len(named) == 1 else 0

    def _self_named(self, ram: bytes, num: int) -> bool:
        return self.objects.short_name(ram, num).strip("()").lower() in PLAYER_NAMES

    def _watching_for_walker(self, command: str) -> bool:
        """A game without bindings whose player has not walked yet, and a command that walks."""
        return not self.supported and not self.player and direction_of(command) is not None

    def _walker(self, before: WorldSnapshot, after: WorldSnapshot, state: tuple) -> int:
        """The object a live move took from one room into another, and that an idle turn from the same `state`
        leaves where it was (of several, `_likeliest_player`); else 0."""
        idle = self._probe("find_player", lambda shadow: shadow.play_from(state, IDLE_COMMAND))
        if idle is None:
            return 0
        on_their_own = set(_walkers(before, self.objects.snapshot(idle[1].ram, idle[1].special)))
        moved = Counter(num for num in _walkers(before, after) if num not in on_their_own)
        return self._likeliest_player(moved, before) if moved else 0

    def _find_rooms_container(self, world: WorldSnapshot) -> int:
        """The topmost ancestor of the player's starting room, when it holds many objects (see the constant)."""
        start = int(world.globals[0]) if self.version <= 3 else world.parent(self.player)
        top = start
        for _ in range(self.objects.count):
            if not world.parent(top):
                break
            top = world.parent(top)
        if top and top != start and len(world.contents(top)) >= ROOMS_CONTAINER_MIN_CHILDREN:
            return top
        return 0

    def _named(self, ram, num: int) -> GameObject:
        return GameObject(num, self.objects.short_name(ram, num))

    def _descendants(self, world: WorldSnapshot, container: int | None, depth: int) -> list[int]:
        """Objects inside `container`, `depth` levels deep, leaving out the player and what it holds."""
        found: list[int] = []
        for num in world.contents(container) if container else ():
            if num == self.player:
                continue
            found.append(num)
            if depth > 1:
                found.extend(self._descendants(world, num, depth - 1))
        return found

    def object_vocabulary(self) -> dict[int, frozenset[str]]:
        """Object number -> dictionary words naming it (synonyms included), read from the story file: which printed
        word a thing answers to (managers.game_reader). Falls back to the words of each object's short name when
        the story file's layout is not understood."""
        words = [w.word for w in self.dictionary()]
        objects = [o for o in self.env.get_world_objects() if o.num > 0]
        try:
            vocabulary = object_vocabulary(self.story_file.read_bytes(), words, len(objects))
        except (IndexError, struct.error):
            vocabulary = {}
        if not vocabulary:
            logger.warning("object vocabulary not readable from the story file: using short names")
            limit = self.dictionary_word_length
            vocabulary = {o.num: frozenset(w[:limit] for w in re.findall(r"[a-z]+", o.name.lower())) for o in objects}
        return vocabulary

    def dictionary(self) -> list[Any]:
        """Jericho's dictionary words, read once: a second `get_dictionary()` crashes the C core on some games."""
        if self._dictionary is None:
            self._dictionary = list(self.env.get_dictionary())
        return self._dictionary

    @property
    def dictionary_range(self) -> tuple[int, int]:
        """[first, end) addresses of the dictionary's entries: a global holding one holds a word the parser read."""
        first, entry_length, count = dictionary_addresses(self.objects.story)
        return first, first + entry_length * count

    @property
    def dictionary_word_length(self) -> int:
        """Characters the parser keeps of a word: 6 in version 1-3 story files, 9 from version 4."""
        return 6 if self.version <= 3 else 9

    @property
    def max_score(self) -> int | None:
        """The most points the game gives: Jericho's, or what the game printed as its maximum (None: never)."""
        return self._jericho_max if self.supported else self.max_known

    def unreadable(self) -> list[str]:
        """What this game has not shown a player so far, of what the harness reads: `score` (no status line and no
        answer to `score`), `max_score`, `room` (no player object walked). The loop break and the context go
        without it; summary.json says so once."""
        missing = {"score": not self.score_read, "max_score": self.max_score is None, "room": not self.player}
        return [name for name, unknown in missing.items() if unknown]

    def walkthrough(self) -> list[str]:
        """The game's walkthrough: Jericho's, else the commands of a `<story>.walkthrough` file beside the story file
        (one per line, as `--actions` reads them: what benchmarks.generated writes for a generated game); [] when
        there is neither."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            commands = list(self.env.get_walkthrough())
        beside = self.story_file.with_suffix(WALKTHROUGH_SUFFIX)
        if commands or not beside.is_file():
            return commands
        try:
            return read_command_file(beside)
        except CommandFileError as exc:
            raise StoryFileError(f"walkthrough {exc}") from None

    # -- snapshots ---------------------------------------------------------------------------------------
    def fingerprint(self) -> Fingerprint:
        """The state a restore must give back equal (see `Fingerprint`), read from memory now."""
        now = self.env.observe(hashed=False)
        world = self.objects.snapshot(now.ram, now.special)
        return Fingerprint.of(world, self.player_room(world), now.score, self.player, (now.game_over, now.victory))

    def snapshot(self) -> Snapshot:
        """The game as it is now, right after the last command (or the reset), for `restore`."""
        if self.view is None:
            raise RestoreError("nothing to snapshot before the first reset")
        view = self.view
        ended = (view.game_over, view.victory)
        return Snapshot(
            story_md5=self.story_md5,
            commands=tuple(self.commands),
            anchor=self._anchor[0],
            anchor_turn=self._anchor[1],
            state=state_digest(self.env.get_state()),
            view=view,
            room=self._room,
            titles=tuple(self._titles.items()),
            fingerprint=Fingerprint.of(view.world, view.room_id, view.score, self.player, ended),
            reading=(self._score, self.score_read, self.max_known),
        )

    def restore(self, snap: Snapshot, replay: bool = False) -> tuple[GameView, Restored]:
        """Bring the game back to `snap`, so that the next commands answer exactly as they did after it the first
        time; returns the view the snapshot's turn gave (`snap.view`) and how. Raises RestoreError when neither way
        reaches the snapshot's state (the session is then somewhere else: reset it).

        `FrotzEnv.set_state` alone is not enough. Frotz keeps two things outside the state it saves: the output
        buffer, which still holds the end of the last text printed (sherlock's `>` prompt, a word of partyfoul's)
        and begins the next response with it; and the keys typed for a `read_char` prompt beyond the first, which
        the next `read_char` takes before any new command (sherlock's "press Y or N" answered `No` leaves `o`). So
        the emulator is set to the anchor, the state the latest command read as a line ran from (reading a line
        drops any keys left), and the commands from there are played again: most often just the last. The text
        they print is dropped; the output buffer is left as the first time. Where the state reached is not the
        snapshot's (an emulator halted on an error keeps halting), after the live emulator failed, or with `replay`,
        a fresh emulator replays every command since reset, as `--resume` does. Either way the state reached is
        checked against the snapshot's."""
        if snap.story_md5 != self.story_md5:
            raise RestoreError(f"the snapshot is of another story file than {self.story_file.name}")
        if self.view is None:  # a session that never started knows neither its rooms container nor its view
            self.reset()
        how = Restored.REPLAY if replay else Restored.STATE
        if not self.env.alive:  # it crashed since the snapshot (a command tried on it): a fresh one replays
            how = Restored.REPLAY
        if how is Restored.STATE:
            before = self._play_from(snap.anchor, snap.commands[snap.anchor_turn :])
            if state_digest(self.env.get_state()) != snap.state:
                how = Restored.REPLAY
        if how is Restored.REPLAY:
            self.env.close()
            self.env = self._start(LIVE)
            before = self._play_from(None, snap.commands)
            if state_digest(self.env.get_state()) != snap.state:
                raise RestoreError(f"replaying {snap.turn} commands does not reach the snapshot's state")
        # what the C core read as the last response (some games' game-over test reads it)
        self.env.frotz_lib.set_narrative_text(snap.view.text.encode("cp1252"))
        self.view, self._text, self._room, self._titles = snap.view, snap.view.text, snap.room, dict(snap.titles)
        self._before, self._idle, self.commands = before, None, list(snap.commands)
        self._anchor = (snap.anchor, snap.anchor_turn)
        self._score, self.score_read, self.max_known = snap.reading
        return snap.view, how

    def _play_from(self, start: tuple | None, commands: tuple[str, ...]) -> Any:
        """Set the emulator to `start` (None: reset it) and play `commands` on it; the state the last one ran from
        (None when there were none)."""
        if start is None:
            self._open()
        else:
            self.env.set_state(start)
        before = None
        for command in commands:
            before = self.env.get_state()
            self.env.step(command)
        return before
