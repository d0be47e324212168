"""Which object is the player, in a game Jericho has no bindings for: the object that walks when the player walks.

Jericho's bindings name the player's object for the games they know; in any other game it is found by what moves
when commands are played on the shadow emulator (the probe `find_player`, session.shadow): from the start, every
direction (`PlayerFinder.at_start`); when none leads anywhere (a bed, a dark cellar), `drop all` and `drop <a thing
held>`, then a name the player's object calls itself; failing those, on the live game, its first walk
(`PlayerFinder.walker`) or the first command that moves a thing (`PlayerFinder.dropper`). Once the player is known,
the rooms container (Infocom's ROOMS) is the topmost ancestor of its first room.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from session.commands import DIRECTIONS
from session.emulator import Emulator
from session.records import noun_of
from session.shadow import IDLE_COMMAND, Shadow
from session.zmachine import ObjectTable, WorldSnapshot

FIND_PLAYER = "find_player"
"""The name the player finder's probes are counted under (`Shadow.probe_failures`)."""
PLAYER_NAMES = frozenset({"yourself", "you", "me", "myself", "self", "self object", "player", "protagonist"})
"""What games call the player's own object (Inform's `(self object)` and `yourself`, Infocom's `you`, `player`)."""
DROP_ALL = "drop all"
"""The probe that shows which object is the player without naming anything (`PlayerFinder.dropper`)."""
ROOMS_CONTAINER_MIN_CHILDREN = 16
"""A parentless object holding at least this many objects, above the player's room at the start, is the rooms
container of an Infocom game (ZIL's ROOMS); Inform games keep rooms parentless, with few objects inside each."""


def walkers(before: WorldSnapshot, after: WorldSnapshot) -> list[int]:
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


class PlayerFinder:
    """Finds the player's object by probes on the shadow emulator. It keeps nothing: every answer is read from the
    live emulator (read, never played on) and the worlds and states it is given."""

    def __init__(self, objects: ObjectTable, version: int, shadow: Shadow):
        self.objects = objects
        self.version = version
        self.shadow = shadow

    def at_start(self, live: Emulator) -> int:
        """The player's object as the game starts. Every direction is tried from the start on the shadow emulator:
        the object that went from one room into another in most of them, and not on an idle turn (a character that
        wanders on its own, zork1's thief, moves on every turn), is the player. When no direction leads anywhere
        from the start (a bed, a dark cellar), `_holder`; else 0, and the session watches the player's first walk."""
        state = live.get_state()
        now = live.observe(hashed=False)
        start = self.objects.snapshot(now.ram, now.special)

        def moved_by(command: str) -> list[int]:
            after = self.shadow.world_after(FIND_PLAYER, state, command)
            return walkers(start, after) if after is not None else []

        on_their_own = set(moved_by(IDLE_COMMAND))
        walked = Counter(num for direction in DIRECTIONS for num in moved_by(direction) if num not in on_their_own)
        return self._likeliest(live, walked, start) if walked else self._holder(live, start, state)

    def walker(self, live: Emulator, before: WorldSnapshot, after: WorldSnapshot, state: tuple) -> int:
        """The object a live move took from one room (`before`) into another (`after`), and that an idle turn from
        the same `state` leaves where it was (of several, `_likeliest`); else 0."""
        idle = self.shadow.world_after(FIND_PLAYER, state, IDLE_COMMAND)
        if idle is None:
            return 0
        on_their_own = set(walkers(before, idle))
        moved = Counter(num for num in walkers(before, after) if num not in on_their_own)
        return self._likeliest(live, moved, before) if moved else 0

    def dropper(self, world: WorldSnapshot, state: tuple) -> int:
        """The object `drop all` empties into its own parent (the player, dropping what it holds where it stands),
        when exactly one does; else 0. No thing needs a name for it: TextWorld's objects have none."""
        after = self.shadow.world_after(FIND_PLAYER, state, DROP_ALL)
        if after is None:
            return 0
        moved = np.nonzero(world.parents != after.parents)[0] + 1
        droppers = {
            holder
            for num in moved
            if (holder := world.parent(int(num)))
            and world.parent(holder)
            and after.parent(int(num)) == world.parent(holder)
        }
        return droppers.pop() if len(droppers) == 1 else 0

    def rooms_container(self, world: WorldSnapshot, player: int) -> int:
        """The topmost ancestor of the player's starting room, when it holds many objects (see the constant): the
        object holding every room (Infocom games), or 0 when rooms are parentless (Inform games)."""
        start = int(world.globals[0]) if self.version <= 3 else world.parent(player)
        top = start
        for _ in range(self.objects.count):
            if not world.parent(top):
                break
            top = world.parent(top)
        if top and top != start and len(world.contents(top)) >= ROOMS_CONTAINER_MIN_CHILDREN:
            return top
        return 0

    def _likeliest(self, live: Emulator, walked: Counter[int], world: WorldSnapshot) -> int:
        """Of the objects that walked (how often), the player: followers walk along (temple's shadows, hhgg's Ford),
        so the one that walked most, then the one that calls itself the player, then the one holding most."""
        ram = live.observe(hashed=False).ram.tobytes()
        return max(walked, key=lambda num: (walked[num], self._self_named(ram, num), len(world.contents(num)), -num))

    def _holder(self, live: Emulator, world: WorldSnapshot, state: tuple) -> int:
        """The player's object when no way out of the start works (a bed, the dark, an opening scene): the object
        `drop all` empties into its room (`dropper`), or the object in a room from which `drop <a thing it holds>`
        puts that thing in the room, else the one object in the status line's room (versions 1-3) or anywhere
        (later ones) that calls itself the player (PLAYER_NAMES); 0 when none tells (the session then watches the
        player's first walk, and the first command that moves a thing)."""
        dropper = self.dropper(world, state)
        if dropper:
            return dropper
        ram = live.observe(hashed=False).ram.tobytes()
        for num in range(1, self.objects.count + 1):
            room = world.parent(num)
            held = [c for c in world.contents(num) if noun_of(self.objects.short_name(ram, c)).isalpha()]
            if not held or not room or world.parent(room) not in (0, world.parent(world.parent(room))):
                continue
            command = f"drop {noun_of(self.objects.short_name(ram, held[0]))}"
            after = self.shadow.world_after(FIND_PLAYER, state, command)
            if after is not None and after.parent(held[0]) == room:
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
