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

from session.commands import why_not_run
from session.emulator import DEFAULT_TIME_LIMIT, LIVE, SHADOW, Emulator, EmulatorFailed, EmulatorHung, Observation
from session.events import EventType
from session.outcomes import title_like
from session.records import GameObject, GameView
from session.story_file import UnplayableStory, check_header
from session.zmachine import ObjectTable, WorldSnapshot, dictionary_addresses, object_vocabulary

_T = TypeVar("_T")

ZORK1_MD5 = "b732a93a6244ddd92a9b9a3e3a46c687"
NOISE_PROBES = ("look", "inventory", "examine me", "xyzzy plugh", "take me", "verbose", "wait")
"""Harmless commands whose outcomes, compared from one state, show which globals hold the parser's words and the
clock rather than the world (see `noisy_globals`)."""
TEXT, MEMORY, HASHED = 0, 1, 2
"""What a command played on the shadow gives back (`JerichoSession._on_copy`), each more than the one before: the
game's answer; with what it left (`Observation`: the room); with the world hash too (`Trial.changed`)."""
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
"""The Z-machine's `read` (a line of input), as opposed to 246, `read_char` (one key)."""
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
        tree = hashlib.md5(world.parents.tobytes())
        for part in (world.siblings, world.children, world.attributes):
            tree.update(part.tobytes())
        return cls(
            room=room,
            score=score,
            inventory=tuple(world.contents(player)) if player else (),
            tree=tree.hexdigest(),
            globals=hashlib.md5(world.globals.tobytes()).hexdigest(),
            ended=ended,
        )


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
        if not self.supported or caught:
            logger.warning(
                f"{path.name} is not fully supported by Jericho: score, moves and change detection are reduced"
            )
        self.story_file = path
        self.story_md5 = hashlib.md5(story).hexdigest()
        self.game_name = (self.env.bindings or {}).get("name", path.stem)
        self.version = story[0]
        self.objects = ObjectTable(story)
        self.player = int(self.env.player_obj_num or 0)
        self.max_score: int = self.env.get_max_score()
        """The game's maximum score as Jericho knows it (0: unknown), read once: the summary of an episode whose
        emulator crashed needs it too."""
        self.rooms_container = 0
        """The object holding every room (Infocom games), or 0 when rooms are parentless (Inform games)."""
        self._text = ""
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
        `trial`, `noisy_globals`, `jericho_noise`)."""
        self._shadow_hangs = 0
        """The shadow's hangs this episode (SHADOW_HANGS_ALLOWED)."""
        self._dictionary: list[Any] | None = None
        self._titles: dict[int, str] = {}
        """Room id -> the title the game printed, for rooms whose object name is internal (`(Alike_Maze_1)`)."""
        self._room: int | None = None
        self.commands: list[str] = []
        """Every command the emulator ran since reset, in order (what `snapshot` keeps for a replay)."""
        self.view: GameView | None = None
        """What the last command (or the reset) gave."""

    # -- lifecycle ---------------------------------------------------------------------------------------
    def reset(self) -> GameView:
        if not self.env.alive:  # the last episode ended with a failure of the live emulator: start a fresh one
            self.env = self._start(LIVE)
        self._text, _ = self.env.reset()
        self._before, self._idle, self.commands, self._anchor = None, None, [], (None, 0)
        self.probe_failures, self._shadow_hangs = Counter(), 0
        self._room = None  # a new episode arrives in its first room, wherever the last one ended
        self.rooms_container = self._find_rooms_container(self.world())
        self.view = self.observe()
        return self.view

    def step(self, command: str) -> GameView:
        """Run one command; the returned view carries the game's response as `text`."""
        reason = why_not_run(command)
        if reason is not None:  # the orchestrator refuses these first: this is the last line of defence
            raise CommandRefused(f"{command[:40]!r}: {reason}")
        before, self._text, after = self.env.play(command)
        self._before, self._idle = before, None
        if before[NEXT_OPCODE] == READ_LINE:
            self._anchor = (before, len(self.commands))
        self.commands.append(command)
        self.view = self.observe(after.rng != tuple(before[RNG_STATE]), after)
        return self.view

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

    def observe(self, rolled_dice: bool = False, now: Observation | None = None) -> GameView:
        """The game as it stands; `rolled_dice` is for `step` to say whether the command drew random numbers, and
        `now` what the live emulator gave with the command's answer."""
        now = now or self.env.observe()
        world = self.objects.snapshot(now.ram, now.special)
        ram = now.ram.tobytes()  # names read a byte at a time: bytes index five times faster than an array
        room = self.player_room(world)
        held = world.contents(self.player) if self.player else []
        inventory = tuple(self._named(ram, num) for num in held)
        inside = tuple(self._named(ram, num) for container in held for num in world.contents(container))
        room_objects = tuple(self._named(ram, num) for num in self._descendants(world, room, depth=2))
        arrived, self._room = room != self._room, room
        return GameView(
            room_id=room,
            room_name=self._room_title(ram, room, arrived) if room is not None else "(nowhere)",
            score=now.score,
            moves=now.moves,
            inventory=tuple(obj for obj in inventory if obj.name),
            room_objects=tuple(obj for obj in room_objects if obj.name),
            world_hash=now.world_hash,
            text=self._text,
            game_over=now.game_over,
            victory=now.victory,
            world=world,
            held_inside=tuple(obj for obj in inside if obj.name),
            rolled_dice=rolled_dice,
        )

    def _room_title(self, ram: Any, room: int, arrived: bool) -> str:
        """What the game calls the room. The object's short name, unless it is an internal one (Inform's `(maze)`,
        `(Alike_Maze_1)`, `(gnomeRoom)`, or none): then the title line the game printed on arrival, else the name
        made readable."""
        name = self.objects.short_name(ram, room).strip()
        if not _internal_name(name):
            return name
        if room not in self._titles and arrived:
            title = next((line.strip() for line in self._text.splitlines() if title_like(line.strip())), "")
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
        return None if why_not_run(command) is not None else self.trial(command)

    def trial(self, command: str, refused: str | None = None) -> Trial | None:
        """What `command` would do from here, played on the shadow emulator from the live state: the game itself
        is never touched (see `idle_world` for why not undo on the live one); None when the shadow crashed or hung
        on it. Raises CommandRefused for what must never run (session.commands.why_not_run): `save` on the shadow
        would still write a file.

        `refused`: a command the game surely refuses (e.g. the verb with a word no game knows). What it leaves is
        no change either: some parsers mark the objects they weighed (gold), or count the first move (zork1)."""
        for line in (command, refused or ""):
            reason = why_not_run(line)
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

        return Trial(played[0], room, changed)

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
        return self.player_room(world), now.score, held, now.world_hash, now.game_over, now.victory

    def noisy_globals(self) -> frozenset[int]:
        """Globals that follow the command's words (the parser's verb and objects, "it") or the clock, not the world.

        Every probe runs from the current state on the shadow emulator: what one `wait` changes is the clock, and
        whatever differs between the probes' outcomes follows the command. Empty when the shadow crashed or hung on
        one: the novelty's own filters (a global a refused command or an idle turn changes) remain.
        """
        state, start = self.env.get_state(), self.world().globals
        outcomes = []
        for probe in NOISE_PROBES:
            played = self._probe("noisy_globals", lambda shadow, probe=probe: shadow.play_from(state, probe))
            if played is None:
                return frozenset()
            outcomes.append(self.objects.snapshot(played[1].ram, played[1].special).globals)
        waited = outcomes[-1]
        noisy = {int(g) for g in np.nonzero(waited != start)[0]}
        for outcome in outcomes[:-1]:
            noisy.update(int(g) for g in np.nonzero(outcome != waited)[0])
        return frozenset(noisy)

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

    def walkthrough(self) -> list[str]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return list(self.env.get_walkthrough())

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
        snapshot's (an emulator halted on an error keeps halting), or with `replay`, a fresh emulator replays every
        command since reset, as `--resume` does. Either way the state reached is checked against the snapshot's."""
        if snap.story_md5 != self.story_md5:
            raise RestoreError(f"the snapshot is of another story file than {self.story_file.name}")
        if self.view is None:  # a session that never started knows neither its rooms container nor its view
            self.reset()
        how = Restored.REPLAY if replay else Restored.STATE
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
        return snap.view, how

    def _play_from(self, start: tuple | None, commands: tuple[str, ...]) -> Any:
        """Set the emulator to `start` (None: reset it) and play `commands` on it; the state the last one ran from
        (None when there were none)."""
        if start is None:
            self.env.reset()
        else:
            self.env.set_state(start)
        before = None
        for command in commands:
            before = self.env.get_state()
            self.env.step(command)
        return before
