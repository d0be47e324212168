"""The repetition window: is the agent doing again what it already did from the same situation?

The turns since the last progress share it (detector.Stretch): the repetition rule stops on it (repetition.py), the
no-progress rule reads the places it went through, the room loops steer by it and the fruitless rule leaves out the
moves it found made again.

A turn repeats when its transition, (the situation it started from, the normalised command), happened before since
the last progress, or when it walks between two known rooms (or into a known room's wall) the way the episode already
walked. A loop repeats every transition once it has gone round once; healthy play, even with detours, keeps trying
new things or trying them from new places, so a window of repeats is rare in it (measured on noisy walkthroughs:
benchmarks/corpus.py). All but `misses` turns of the window must repeat: a random walk now and then takes a door it
had not taken from there, and a character changes the room once. Situations come from managers.novelty (room,
inventory, the room's objects).

Why the two horizons (measured on the corpus and on noisy walkthroughs of seeds 2-8): a clumsy player who comes back
to a place looks around, takes stock and tries the wrong verb there as on the first visit, and a stop rule that
counted those as repeats of the first visit ended zork1's and yomomma's healthy walkthroughs; a walk, though, is what a
wandering loop or a random walk repeats from its first round, and counted for the whole episode it ends them sooner.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from managers.novelty import response_key
from session.commands import canonical_command, direction_of, is_observation, is_wait
from session.outcomes import BLOCKED_EXIT, SUCCESS
from session.records import TurnRecord


@dataclass(frozen=True)
class RepetitionResult:
    repeats: int
    """Repeated transitions among the last `window` turns."""
    window: int
    rooms: tuple[int, ...] = ()
    """Rooms the player was in over those turns (sorted)."""
    misses: int = 0
    """Turns of the window that may be new while it still counts as repeating."""

    @property
    def repeating(self) -> bool:
        """All but `misses` of the last `window` turns repeated a transition."""
        return self.window > 0 and self.repeats >= self.window - self.misses

    @property
    def share(self) -> float:
        return self.repeats / self.window if self.window else 0.0


class RepetitionWindow:
    """The last `window` turns, each marked as repeating or not, and what the turns since the last progress did: the
    stretch's window, fed by the LoopBreak and read by every detector (Stretch.window)."""

    def __init__(self, window: int, free_waits: int = 0, misses: int = 0):
        self.window = window
        self.misses = misses
        """Turns of the window that may be new while it still counts as repeating (a random walk taking a door it
        had not taken from there, a character changing the room once)."""
        self.free_waits = free_waits
        """Waits since the last progress that never repeat: waiting for a timed event is the same command from the
        same situation, again and again, and no loop. The waits after them repeat like any command (a player who
        only waits). 0: every wait can repeat (as the designs count: docs/design.md)."""
        self.waits = 0
        """Waits since the last progress."""
        self.wait_streak = 0
        """Waits in a row, up to the last turn."""
        self.transitions: set[tuple[str, int | None, str]] = set()
        """(situation, spot, command) of every turn since the last progress (the turn that made it included)."""
        self.recent: deque[tuple[bool, int | None]] = deque(maxlen=window)
        """(repeated, room after) of the last `window` turns."""
        self.situation = ""
        """The situation the next command starts from, as repetition compares it (see `aliases`)."""
        self.spot: int | None = None
        """Where the player stands inside a room id, when a move the game took kept it (curses' maze of green privet,
        a sliding puzzle): the answer to that move, which tells one spot from another where nothing in the object
        tree does. None: where the last walk into a room left the player."""
        self.aliases: dict[str, str] = {}
        """Situations an observation (look, examine, inventory; not a wait) led to, since the last progress, mapped to
        the one it was made from: the game changed the room on its own (a character left, a radio counter ticked),
        so what the player does there repeats what it did before."""
        self.stretch_moves: set[tuple] = set()
        """Moves made since the last progress, as (situation, spot, direction) and, between known rooms, as (room,
        inventory, direction): repeating one steers nowhere new."""
        self.walks: set[tuple] = set()
        """(room, inventory, way, destination) of every move between two known rooms: walked again, it repeats
        whatever else changed in the rooms (a feather a timer drops, a character passing by). The way is None
        between two rooms, whichever word took the player there (`in` and `west` into sherlock's Bank Vault, `up` and
        `west` onto balances' Crest of Hill: a random walk's new words for a known way were new turns, 42 turns to
        its end, not 28), and the direction when the player bumped into a wall."""
        self.moved_again = False
        """The last turn was a move the player made before, from the same situation or as a walk (the fruitless
        share leaves these out)."""
        self.stretch_rooms: set[int] = set()
        """Rooms the player has been in since the last progress: all of them belong to the loop, also those of a
        round longer than the window."""
        self.place: tuple | None = None
        """(room, inventory) where the player stands, when the room is known."""
        self.stretch_places: set[tuple] = set()
        """Places the player has been in since the last progress: rooms, and the spots a move inside one room id
        reached (as the situation tells them apart: a maze that keeps the spot in a variable)."""
        self.last_arrival = 0
        """The turn on which the player last reached a place not yet in stretch_places."""

    def observe(self, record: TurnRecord, progress: bool) -> None:
        command = canonical_command(record.command)
        transition = (self.situation, self.spot, command)
        direction = direction_of(command)
        place = (record.room_id_before, tuple(sorted(record.inventory_before)))
        # A room id shared by a whole area, or none at all, says nothing about where a move went; a move the game
        # refused ("You can't go that way") went nowhere, and bumping into a known room's wall again is a walk too.
        rooms = (record.room_id_before, record.room_id_after)
        bumped = record.result_category == BLOCKED_EXIT and rooms[0] is not None and rooms[0] == rooms[1]
        walked = direction is not None and None not in rooms and (rooms[0] != rooms[1] or bumped)
        walk = (*place, direction if bumped else None, record.room_id_after) if walked else None
        repeated = transition in self.transitions or walk in self.walks
        self.moved_again = direction is not None and repeated
        waiting = is_wait(command)
        if waiting:
            self.waits += 1
            self.wait_streak += 1
            repeated = repeated and self.waits > self.free_waits
        else:
            self.wait_streak = 0
        self.recent.append((repeated, record.room_id_after))
        if progress:
            self.waits = 0
            self.aliases.clear()
            self.transitions.clear()
            self.stretch_moves.clear()
            self.stretch_rooms.clear()
            self.stretch_places.clear()
        self.transitions.add(transition)
        within = direction is not None and not walked and record.result_category == SUCCESS  # walked inside a room
        if record.room_id_after is not None:
            self.stretch_rooms.add(record.room_id_after)
            arrived = (record.room_id_after, record.situation if within else None)
            if arrived not in self.stretch_places:
                self.stretch_places.add(arrived)
                self.last_arrival = record.turn
        if walk is not None:
            self.walks.add(walk)
            self.stretch_moves.add((*place, direction))
        if direction is not None:
            self.stretch_moves.add((self.situation, self.spot, direction))
        if within:
            self.spot = response_key(record.response)
        elif rooms[0] != rooms[1]:
            self.spot = None
        situation = self.aliases.get(record.situation, record.situation)
        looked = is_observation(command) and not waiting and not progress
        if looked and self.situation and situation != self.situation:  # "": before the first turn, unknown
            self.aliases[record.situation] = situation = self.situation
        self.situation = situation
        after = (record.room_id_after, tuple(sorted(record.inventory_after)))
        self.place = after if record.room_id_after is not None else None

    @property
    def waited_out(self) -> bool:
        """More waits in a row than the free waits, and a whole window of them: what they were for has not come
        (optimal walkthroughs wait at most 16 times in a row, over the 56 of Jericho's game_info), so every wait of
        the window repeats, whatever a thief or a timer changed meanwhile. A player who looks around between waits
        keeps the free waits (a sheriff comes at a time, however the player spends it). Never with no free waits
        (as the designs count: docs/design.md)."""
        return bool(self.free_waits) and self.wait_streak > self.free_waits and self.wait_streak >= self.window

    def _flags(self) -> list[bool]:
        if self.waited_out:
            return [True] * len(self.recent)
        return [repeated for repeated, _ in self.recent]

    def result(self) -> RepetitionResult:
        if len(self.recent) < self.window:
            return RepetitionResult(0, 0)
        rooms = tuple(sorted({room for _, room in self.recent if room is not None}))
        return RepetitionResult(sum(self._flags()), self.window, rooms, self.misses)

    def repeats_so_far(self) -> int:
        """Repeating turns among the last `window` turns, before the window is full too."""
        return sum(self._flags())

    def turns_until_repeating(self) -> int:
        """Turns of repeats still needed before the window counts as repeating (0: it does now)."""
        flags = self._flags()
        missing = self.window - len(flags)
        # The (misses + 1)-th newest new turn must leave the window; fewer new turns than that, only filling it.
        ages = [age for age, repeated in enumerate(reversed(flags)) if not repeated]
        if len(ages) <= self.misses:
            return missing
        return max(missing, self.window - ages[self.misses])

    def repeats_move(self, command: str) -> bool:
        """The command is a move this situation, or this room with these things in hand, already made since the
        last progress."""
        direction = direction_of(command)
        if direction is None:
            return False
        from_here = self.place is not None and (*self.place, direction) in self.stretch_moves
        return from_here or (self.situation, self.spot, direction) in self.stretch_moves
