"""Churning: the player keeps changing small things in one room and gets nowhere (busy camping).

Taking and dropping, opening and closing, wearing and removing, switching on and off, each over the room's many
objects: every change is one the episode has seen (else it would be progress: a new object state), yet the
combination of what is held, open and switched on keeps being new. The repetition rule compares whole situations,
so it sees a new one after every such change; the cycle rule needs the commands in a fixed order; the fruitless rule
needs new commands. What such play does is visible without any of them: in place, it keeps changing the world in
ways that reach nothing new. Healthy play changes things too, but a change that reaches nothing new is rare in it: a
walkthrough's changes are progress (a first take, a first opening), and a clumsy player's detours (looks, examinations,
wrong verbs, steps out and back) change nothing.

A turn churns when it is no move and no observation (session.commands.is_observation), keeps the player in the
same known room, leaves a situation (managers.novelty) other than the one it started from or changes the state of
what is in hand (a uniform put on, a carried canteen opened: `TurnRecord.held`), and makes no progress but by the
weak signals (`fruitless_weak_signals`: a new combination of things in hand is what this play produces; a new value
of a game variable is none when the command was made in this room before, the same act again stepping a variable
the game keeps), and is about another thing than the last change in that room (detectors.Churn): working one device
again and again (curses' sceptre spun until the wanted word comes up, its coffin's lid opened and closed while the
magic inside works) is no fiddling with many things, and healthy walkthroughs do it, until the same command has made
its change `device_times` times since the last progress, the game answering alike every time: a flashlight switched
off and on among fidgets is fiddling, while a device whose answer varies (a spinner) is a gamble and never churns.
Churning is counted room by room: camping is in one room, while a player who carries things about and uses them a
turn or two in each room (adventureland's water and bees, trinity's epilogue in the park, a recipe's ingredients
fetched from three rooms) churns a little in many. Two counts over the last `churn_window` turns, of the room where
most churning turns were, either of which stops the episode:
- churning turns since the last progress (`churn_changes`);
- churning turns by a command already made in this room (`churn_repeats`), none reaching a new object state, since
  the last progress by a signal other than new object states. A room with many things has many combinations of
  them: each first one is a new object state, which restarts the first count again and again (sherlock's study),
  but the commands that reach them are made again. Healthy play makes new combinations with new commands (spirit's
  recipe: take the sugar from the pot, put it in the pan, then the egg).
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass

from session.config import ProgressSignal

OBJECT_STATE_SIGNAL: ProgressSignal = "new_object_state"
"""Progress the second count goes on across: a new combination of the states of a room's things."""
VARIABLE_SIGNAL: ProgressSignal = "new_game_variable"
"""Progress that a change in place by a command made there before does not count as: the same act again stepping
a variable the game keeps (lostpig's pole, taken and dropped, gives one a new value every time)."""


@dataclass(frozen=True)
class ChurnTurn:
    """What the churn counts read of one turn."""

    room: int | None
    """The room the turn was played in."""
    churned: bool
    """No move, no observation, in the same known room, another situation left (or what is held changed), no progress
    but by weak signals."""
    made_again: bool
    """The command was made in this room before, since the last progress but by new object states."""
    object_progress: bool
    """Progress by new object states (and weak signals) only."""


class ChurnCount:
    def __init__(self, window: int, changes: int, repeats: int, min_turns: int):
        self.changed: deque[int | None] = deque(maxlen=window)
        """For each of the last `window` turns since the last progress but by the weak signals, the room it churned
        in (None: it did not churn)."""
        self.repeated: deque[int | None] = deque(maxlen=window)
        """For each of the last `window` turns, the room it churned in by a command made again, reaching no new
        object state, since the last progress but by the weak signals and new object states (None: it did not)."""
        self.turns = 0
        """Turns since the last progress but by the weak signals."""
        self.turns_across = 0
        """Turns since the last progress but by the weak signals and new object states."""
        self.made: set[tuple[int | None, str]] = set()
        """(room, canonical command) of every command made since the last progress but by the weak signals and new
        object states: a churning turn by one of them is made again."""
        self.changes_to_stop, self.repeats_to_stop, self.min_turns = changes, repeats, min_turns

    def restart(self) -> None:
        """Progress by a signal other than the weak ones and new object states: both counts start again."""
        self.changed.clear()
        self.repeated.clear()
        self.made.clear()
        self.turns = self.turns_across = 0

    def was_made(self, command: tuple[int | None, str]) -> bool:
        """Whether this (room, canonical command) was made since the last restart, remembering nothing."""
        return command in self.made

    def made_before(self, command: tuple[int | None, str]) -> bool:
        """Whether this (room, canonical command) was made since the last restart; it is remembered from now on."""
        before = command in self.made
        self.made.add(command)
        return before

    def observe(self, turn: ChurnTurn) -> None:
        room = turn.room if turn.churned else None
        if turn.object_progress:
            self.changed.clear()
            self.turns = 0
        else:
            self.turns += 1
            self.changed.append(room)
        self.turns_across += 1
        self.repeated.append(room if turn.made_again and not turn.object_progress else None)

    @property
    def changes(self) -> int:
        """Churning turns in the window since the last progress, in the room that had most of them."""
        return _most_in_one_room(self.changed)

    @property
    def repeats(self) -> int:
        """Churning turns by commands made again in the window since the last progress but by object states, in the
        room that had most of them."""
        return _most_in_one_room(self.repeated)

    @property
    def by_changes(self) -> bool:
        """The churning turns have reached their stop (never at 0: off), `min_turns` turns after the progress."""
        return 0 < self.changes_to_stop <= self.changes and self.turns >= self.min_turns

    @property
    def by_repeats(self) -> bool:
        """The churning turns made again have reached their stop (never at 0: off), `min_turns` turns after the
        progress they count from."""
        return 0 < self.repeats_to_stop <= self.repeats and self.turns_across >= self.min_turns

    def holds(self) -> bool:
        """Either count has reached its stop."""
        return self.by_changes or self.by_repeats

    def pressure(self) -> dict[str, float]:
        """Each count over its stop, and its turns over `min_turns`: the farther of the two (Detector.pressure)."""
        grace = max(1, self.min_turns)
        found = {}
        if self.changes_to_stop:
            found["churn.changes"] = min(self.changes / self.changes_to_stop, self.turns / grace)
        if self.repeats_to_stop:
            found["churn.repeats"] = min(self.repeats / self.repeats_to_stop, self.turns_across / grace)
        return found


def _most_in_one_room(rooms: deque[int | None]) -> int:
    counts = Counter(room for room in rooms if room is not None)
    return max(counts.values(), default=0)
