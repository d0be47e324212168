"""The shadow: probes played on a copy of the live emulator, so that the game itself is never touched.

The copy is a second FrotzEnv with its own C core, in a process of its own (session.emulator). A command is never
tried on the live emulator and undone: Jericho's restore is not exact on every game (sherlock, and tryst205 at a
"press a key" prompt, play differently after a step run and undone on the same emulator; session.snapshots says
what its state leaves out).

A probe is a named function run on the copy: `Shadow.run(name, play)` calls `play(copy)` and gives back what it
returns. The copy holds whatever the last probe left, so `play` first sets the state it starts from
(`copy.play_from(state, command)`, or `copy.set_state(state)`), the live game's (`live.get_state()`, read and never
played on) or one the caller kept. When the copy crashes or hangs, `run` gives None instead: the probe is skipped and
counted under its name (`probe_failures`, in summary.json), and the next probe starts a fresh copy; after
SHADOW_HANGS_ALLOWED hangs in an episode, every probe is skipped unplayed. docs/extending.md ("A shadow probe") says
how to add one.

The probes, by the name they are counted under:

- `idle_world`: the world one idle turn leaves, from the state the last command ran from (`idle_world`), which
  managers.novelty compares a command's changes with: what changed the same way is the game's own doing;
- `trial`: what a command would do from the live state, its answer, the room it leads to and whether it changed
  anything (`trial`, `on_copy`): the pre-check, the game reader, the destination lookahead, and the session's reading
  of the score and the ending of a game without Jericho's bindings;
- `noisy_globals`: the globals that follow the command's words or the clock (`noisy_globals`, NOISE_PROBES);
- `listing_attributes`: the attributes a game's library sets on what it lists (`listing_attributes`, LISTING_PROBES);
- `jericho_noise`: the attributes and objects Jericho's bindings strip as noise (`jericho_noise`);
- `find_player`: which object is the player in a game without Jericho's bindings (session.player_finder).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import cached_property
from typing import Any, Protocol, TypeVar

import numpy as np
from loguru import logger

from session.commands import refuse_unrunnable
from session.emulator import SHADOW, Emulator, EmulatorFailed, EmulatorHung, Observation
from session.events import EventType
from session.zmachine import ObjectTable, WorldSnapshot, attributes_set

_T = TypeVar("_T")

IDLE_COMMAND = "look"
"""One turn that changes nothing: what the world does meanwhile on its own (clocks, NPCs) is not the player's doing.
`look` takes exactly one turn in every game of the corpus; `wait` takes 3 to 10 in Infocom games."""
NOISE_PROBES = ("look", "inventory", "examine me", "xyzzy plugh", "take me", "verbose", "wait")
"""Harmless commands whose outcomes, compared from one state, show which globals hold the parser's words and the
clock rather than the world (see `noisy_globals`)."""
LISTING_PROBES = ("look", "inventory")
"""Two idle commands that list different things: what they leave differently is the library's bookkeeping of what
it printed (see `listing_attributes`). Both take a turn alike, so a clock moves the same way in each."""
TEXT, MEMORY, HASHED = 0, 1, 2
"""What a command played on the copy gives back (`Shadow.on_copy`), each more than the one before: the game's
answer; with what it left (`Observation`: the room); with the world hash too (`Trial.changed`)."""
SHADOW_HANGS_ALLOWED = 3
"""Hangs of the copy an episode waits out (each costs the time limit); after them its probes are skipped unplayed
for the rest of the episode, so a game whose C core loops on its probes from many states is not played at the pace
of one time limit a turn. A crash costs a fresh emulator (tens of ms) and is never given up on."""


class LiveReader(Protocol):
    """How the live session reads a game (JerichoSession): a trial reads the copy with the same eyes."""

    def as_read(self, text: str) -> str:
        """The game's answer as a player reads it."""

    def player_room(self, world: WorldSnapshot) -> int | None:
        """The room the player is in; None when unknown."""

    def footprint(self, now: Observation) -> tuple:
        """What a command that did nothing leaves as it was."""


class Trial:
    """What a command would do from the current state, played on the copy (`Shadow.trial`)."""

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
        the copy failed while it was read: a change that cannot be ruled out."""
        return self._changed()


class Shadow:
    """The copy of the live emulator the probes play on, and what its failures cost this episode."""

    def __init__(self, objects: ObjectTable, start: Callable[[], Emulator]):
        self.objects = objects
        """The story file's object table: how a probe reads the world it left on the copy."""
        self._start = start
        """A new emulator of the story file, in the shadow's role."""
        self.emulator: Emulator | None = None
        """The copy; None before the first probe (`ready` replaces one that failed)."""
        self.probe_failures: Counter[str] = Counter()
        """Probes skipped this episode because the copy crashed or hung, by name (the module's docstring)."""
        self.hangs = 0
        """The copy's hangs this episode (SHADOW_HANGS_ALLOWED)."""
        self._answers: tuple[tuple | None, dict[str, tuple[int, tuple[str, Observation] | None]]] = (None, {})
        """The state `on_copy` last played commands from, and each command's answer from it with its detail."""
        self._idle: tuple[tuple | None, WorldSnapshot | None] = (None, None)
        """The state `idle_world` last played from, and what it gave (None: the copy failed)."""

    def new_episode(self) -> None:
        """Forget the failures: a new episode tries the copy again."""
        self.probe_failures, self.hangs = Counter(), 0

    def close(self) -> None:
        if self.emulator is not None:
            self.emulator.close()

    # -- running a probe ------------------------------------------------------------------------------------------
    def ready(self) -> Emulator:
        """The copy; a fresh one when there is none yet or the last one failed."""
        if self.emulator is None or not self.emulator.alive:
            if self.emulator is not None:
                self.emulator.close()
            self.emulator = self._start()
            self.emulator.reset()
        return self.emulator

    def run(self, name: str, play: Callable[[Emulator], _T]) -> _T | None:
        """`play` on the copy, as the probe `name`; None when the copy crashes or hangs on it: the probe is skipped
        and counted (`probe_failures`), and the next probe starts a fresh copy (none after SHADOW_HANGS_ALLOWED
        hangs). A failure of the live emulator is raised: it ends the episode."""
        if self.hangs >= SHADOW_HANGS_ALLOWED:
            self.probe_failures[name] += 1
            return None
        try:
            return play(self.ready())
        except EmulatorFailed as exc:
            if exc.emulator != SHADOW:
                raise
            if not self.probe_failures:
                logger.bind(event_type=EventType.EMULATOR_FAILED).warning(
                    f"{exc}: the {name} probe is skipped, and so is any other the shadow emulator fails this episode "
                    "(summary.json counts them by probe); the next probe starts a fresh shadow emulator"
                )
            self.probe_failures[name] += 1
            self.hangs += isinstance(exc, EmulatorHung)
            if self.hangs == SHADOW_HANGS_ALLOWED:
                logger.bind(event_type=EventType.EMULATOR_FAILED).warning(
                    f"the shadow emulator hung {SHADOW_HANGS_ALLOWED} times: its probes are skipped for the rest of "
                    "the episode"
                )
            return None

    def world_after(self, name: str, state: tuple, command: str) -> WorldSnapshot | None:
        """The world `command` leaves, played on the copy from `state` as the probe `name`; None when the copy
        failed."""
        played = self.run(name, lambda copy: copy.play_from(state, command))
        return self.objects.snapshot(played[1].ram, played[1].special) if played is not None else None

    def on_copy(self, state: tuple, command: str, detail: int) -> tuple[str, Observation] | None:
        """`command` played on the copy from the live `state` (the probe `trial`): the game's answer and what it
        left, as much as `detail` asks (TEXT, MEMORY, HASHED: the world hash costs more than the step, and the
        pre-check mostly reads the answer alone); None when the copy crashed or hung on it. Each command is played
        once per state and detail: the pre-check and the lookahead try the same proposal, and the live emulator hands
        out the same state object until the game moves."""
        if self._answers[0] is not state:
            self._answers = (state, {})
        answers = self._answers[1]
        known, answer = answers.get(command, (-1, None))
        if known < detail and not (known >= 0 and answer is None):  # a failure is not tried again from this state
            answer = self.run(
                "trial",
                lambda copy: copy.play_from(state, command, observe=detail >= MEMORY, hashed=detail >= HASHED),
            )
            answers[command] = (detail, answer)
        return answer

    # -- the probes -----------------------------------------------------------------------------------------------
    def idle_world(self, state: tuple | None) -> WorldSnapshot | None:
        """The world as one idle turn (IDLE_COMMAND) would have left it, from `state`, the state the last command
        ran from: what changed the same way is the game's own doing (a clock, an NPC), not the command's. Played once
        per state, on demand. None when the copy crashed or hung on it, as with no state (before the first command):
        every change then counts as the command's (managers.novelty)."""
        if state is None:
            return None
        if self._idle[0] is not state:
            self._idle = (state, self.world_after("idle_world", state, IDLE_COMMAND))
        return self._idle[1]

    def trial(self, live: Emulator, command: str, refused: str | None, reader: LiveReader) -> Trial | None:
        """What `command` would do from the live game's state, played on the copy; None when the copy crashed or
        hung on it. Raises CommandRefused for what must never run (session.commands.why_not_run): `save` on the copy
        would still write a file.

        `refused`: a command the game surely refuses (e.g. the verb with a word no game knows). What it leaves is
        no change either: some parsers mark the objects they weighed (gold), or count the first move (zork1)."""
        for line in (command, refused or ""):
            refuse_unrunnable(line)
        state = live.get_state()
        played = self.on_copy(state, command, TEXT)
        if played is None:
            return None

        def room() -> int | None:
            again = self.on_copy(state, command, MEMORY)
            return reader.player_room(self.objects.snapshot(again[1].ram, again[1].special)) if again else None

        def changed() -> bool:
            hashed = self.on_copy(state, command, HASHED)
            if hashed is None:
                return True
            footprint = reader.footprint(hashed[1])
            if footprint == reader.footprint(live.observe()):
                return False
            if refused is None:
                return True
            again = self.on_copy(state, refused, HASHED)
            return again is None or footprint != reader.footprint(again[1])

        return Trial(reader.as_read(played[0]), room, changed)

    def noisy_globals(self, live: Emulator) -> frozenset[int]:
        """Globals that follow the command's words (the parser's verb and objects, "it") or the clock, not the world.

        Every probe runs from the live game's state on the copy: what one `wait` changes is the clock, and whatever
        differs between the probes' outcomes follows the command. Empty when the copy crashed or hung on one: the
        novelty's own filters (a global a refused command or an idle turn changes) remain.
        """
        now = live.observe(hashed=False)
        start = self.objects.snapshot(now.ram, now.special).globals
        worlds = self._worlds_after("noisy_globals", live.get_state(), NOISE_PROBES)
        if worlds is None:
            return frozenset()
        outcomes = [world.globals for world in worlds]
        waited = outcomes[-1]
        noisy = {int(g) for g in np.nonzero(waited != start)[0]}
        for outcome in outcomes[:-1]:
            noisy.update(int(g) for g in np.nonzero(outcome != waited)[0])
        return frozenset(noisy)

    def listing_attributes(self, live: Emulator) -> frozenset[int]:
        """Attribute numbers that LISTING_PROBES, played from the live game's state on the copy, leave differently:
        flags a game's library sets on what it prints (Inform 7 marks what a room description lists, so `look` and
        `read table` leave them otherwise than `inventory`), which no command changed in the world. Empty when the
        copy crashed or hung on a probe."""
        worlds = self._worlds_after("listing_attributes", live.get_state(), LISTING_PROBES)
        if worlds is None:
            return frozenset()
        outcomes = [world.attributes for world in worlds]
        differing = np.bitwise_or.reduce([outcomes[0] ^ other for other in outcomes[1:]])
        return attributes_set(np.bitwise_or.reduce(differing, axis=0))

    def jericho_noise(self, live: Emulator) -> tuple[frozenset[int], frozenset[int]]:
        """(attribute numbers, object numbers) that Jericho's per-game bindings treat as noise in world state: the
        "touched" and "visited" attributes, NPCs that wander on their own (zork1's thief). Read by giving every
        object every attribute on the copy and seeing what `get_world_objects(clean=True)` strips. Jericho shows 32
        attributes, so the mask covers attributes 0-31; unsupported games give nothing, and so does a copy that
        crashed or hung on it."""
        state = list(live.get_state())
        layout = self.objects.layout

        def marked(copy: Emulator) -> tuple[int, Any]:
            ram = state[0].copy()
            count = min(layout.count, int(copy.frotz_lib.get_num_world_objs()))
            for index in range(count):
                entry = layout.first_entry + index * layout.entry_size
                ram[entry : entry + layout.attribute_bytes] = 0xFF
            copy.set_state((ram, *state[1:]))
            return count, copy.get_world_objects(clean=True)

        played = self.run("jericho_noise", marked)
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

    def _worlds_after(self, name: str, state: tuple, commands: tuple[str, ...]) -> list[WorldSnapshot] | None:
        """The world each of `commands` leaves, each played from `state` on the copy as the probe `name`; None when
        the copy crashed or hung on one."""
        worlds = []
        for command in commands:
            world = self.world_after(name, state, command)
            if world is None:
                return None
            worlds.append(world)
        return worlds
