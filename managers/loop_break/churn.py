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
weak signals (`loop_break.weak_signals`: a new combination of things in hand is what this play produces; a new value
of a game variable is none when the command was made in this room before, the same act again stepping a variable
the game keeps), and is about another thing than the last change in that room (`Churn`): working one device
again and again (curses' sceptre spun until the wanted word comes up, its coffin's lid opened and closed while the
magic inside works) is no fiddling with many things, and healthy walkthroughs do it, until the same command has made
its change `device_times` times since the last progress, the game answering alike every time: a flashlight switched
off and on among fidgets is fiddling, while a device whose answer varies (a spinner) is a gamble and never churns.
Churning is counted room by room: camping is in one room, while a player who carries things about and uses them a
turn or two in each room (adventureland's water and bees, trinity's epilogue in the park, a recipe's ingredients
fetched from three rooms) churns a little in many. Two counts over the last `window` turns, of the room where
most churning turns were, either of which stops the episode:
- churning turns since the last progress (`changes`);
- churning turns by a command already made in this room (`repeats`), none reaching a new object state, since
  the last progress by a signal other than new object states. A room with many things has many combinations of
  them: each first one is a new object state, which restarts the first count again and again (sherlock's study),
  but the commands that reach them are made again. Healthy play makes new combinations with new commands (spirit's
  recipe: take the sugar from the pot, put it in the pan, then the egg).
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from managers.loop_break.detector import Detector, Stretch, Turn, register
from managers.novelty import answer_key
from session.commands import PARTICLES, canonical_command, direction_of, is_observation
from session.config import DetectorSection, ProgressSignal
from session.records import TurnRecord

OBJECT_STATE_SIGNAL: ProgressSignal = "new_object_state"
"""Progress the second count goes on across: a new combination of the states of a room's things."""
VARIABLE_SIGNAL: ProgressSignal = "new_game_variable"
"""Progress that a change in place by a command made there before does not count as: the same act again stepping
a variable the game keeps (lostpig's pole, taken and dropped, gives one a new value every time)."""


class ChurnConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.churn]`: the churn rule, busy changes in place that reach nothing new."""

    changes: int = Field(8, ge=0, le=100_000)
    """Stop (`stuck_no_progress`, rule `churn`) when this many of the last `window` turns changed things in
    place and reached nothing new (no move, no observation, the same room, a situation other than the last one or
    what is carried in another state, no progress but by `weak_signals`, not about the same thing as the last such
    change there): busy camping, taking and dropping, opening and closing over a room's many things, where every
    combination in hand is new. 0: off."""
    repeats: int = Field(3, ge=0, le=100_000)
    """Stop (rule `churn`) when this many of the last `window` turns changed things in place by a command made
    in that room before and reached no new object state, counted since the last progress by a signal other than
    `weak_signals` and new object states: in a room with many things every first combination of them is
    a new object state, which would restart the count above again and again. 0: off."""
    window: int = Field(24, ge=1, le=100_000)
    """The turns over which churning turns are counted."""
    min_turns: int = Field(10, ge=0, le=100_000)
    """Turns since the last progress by a signal other than the weak ones before the churn rule may stop: a busy
    loop's first round reaches new object states, which are progress."""
    device_times: int = Field(7, ge=0, le=100_000)
    """A change about the same thing as the last change in its room (one device worked again: a lid opened and
    closed, a flashlight switched off and on) churns only once the same command has made it this many times since
    the last progress by a signal other than the weak ones and new object states, the game answering it
    alike every time. A device whose answer varies (a spinner that lands on another word) is a gamble, never churn.
    0: one device worked again never churns."""

    @classmethod
    def stop_rule_off(cls) -> dict[str, Any]:
        return {"changes": 0, "repeats": 0}


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


@register
class Churn(Detector):
    """The churn rule: changes in place that reach nothing new."""

    name = "churn"
    config_model = ChurnConfig
    stop_rule = "churn"
    config: ChurnConfig

    def __init__(self, config: ChurnConfig, tools):
        super().__init__(config, tools)
        self.count = ChurnCount(config.window, config.changes, config.repeats, config.min_turns)
        """Changes in place that reached nothing new, since the last progress by a strong signal (busy camping)."""
        self.situation = ""
        """The situation the last turn left ("" before the first): a churning turn leaves another one or changes
        `held`."""
        self.held = ""
        """The state of the things in hand the last turn left (TurnRecord.held): wearing and removing, opening and
        shutting what is carried changes it alone."""
        self.last_changed: dict[int | None, str] = {}
        """Room -> what the last turn that changed things in place there was about (`_about`)."""
        self.worked: dict[tuple[int | None, str], tuple[frozenset[int], int]] = {}
        """(room, canonical command) -> (the game's answers, times) of every change it made in place since the last
        progress but by the weak signals and new object states: one device worked alike too often churns."""

    def observe(self, turn: Turn) -> None:
        """A turn churns when it changed the situation or what is held in place (no move, no observation, the same
        known room) and made no progress but by the weak signals (or a new game variable, by a command made here
        before: lostpig's pole taken and dropped steps one every time); not when it is about the same thing as the last
        change in that room: one device worked again and again (curses' sceptre spun until the wanted word comes
        up, its coffin's lid opened and closed four times while the magic inside works, coming back to the same two
        situations) is no fiddling with many things, until the same command has made its change `device_times`
        times, the game answering alike every time (hollywood's flashlight switched off and on among fidgets)."""
        record = turn.record
        before, self.situation = self.situation, record.situation
        held_before, self.held = self.held, record.held
        command = record.command
        in_place = record.room_id_before is not None and record.room_id_before == record.room_id_after
        doing = direction_of(command) is None and not is_observation(command)
        room, canonical = record.room_id_before, canonical_command(command)
        changed = bool(before) and in_place and doing and (record.situation != before or record.held != held_before)
        strong = set(turn.progress.signals) - turn.stretch.weak_signals
        if changed and self.count.was_made((room, canonical)):
            strong -= {VARIABLE_SIGNAL}  # the same act again stepping a variable the game keeps
        if strong - {OBJECT_STATE_SIGNAL}:
            self.count.restart()
            self.worked.clear()
            return
        about = _about(canonical)
        worked_out = changed and self._worked_out(room, canonical, record)
        churned = changed and (self.last_changed.get(room) != about or worked_out)
        if changed:
            self.last_changed[room] = about
        self.count.observe(ChurnTurn(room, churned, self.count.made_before((room, canonical)), bool(strong)))

    def _worked_out(self, room: int | None, canonical: str, record: TurnRecord) -> bool:
        """One more change in place by this command here: whether it has now made it `device_times` times since the
        last progress, the game answering alike every time (one device worked again and again to no end, not a
        gamble whose answer varies)."""
        answers, times = self.worked.get((room, canonical), (frozenset(), 0))
        answers, times = answers | {answer_key(record.response, record.command)}, times + 1
        self.worked[(room, canonical)] = (answers, times)
        return 0 < self.config.device_times <= times and len(answers) == 1

    def pressure(self, turns_stuck: int, stretch: Stretch) -> dict[str, float]:
        """The two counts (ChurnCount.pressure) and `churn.device`: the most one device was worked alike over
        `device_times`."""
        found = self.count.pressure()
        if self.config.device_times:
            alike = (times for answers, times in self.worked.values() if len(answers) == 1)
            found["churn.device"] = max(alike, default=0) / self.config.device_times
        return found

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        churn = self.count
        if not churn.holds():
            return None
        weak = ", ".join(sorted(stretch.weak_signals))
        if churn.by_repeats:
            return (
                f"{churn.repeats} of the last {len(churn.repeated)} turns changed things in place by commands made "
                f"here before, {churn.turns_across} turns without progress but {weak} and new object states"
            )
        return (
            f"{churn.changes} of the last {len(churn.changed)} turns changed things in place and reached nothing "
            f"new, {churn.turns} turns without progress but {weak}"
        )


def _about(canonical: str) -> str:
    """What a command is about: its words after the verb, particles left out (`open lid` and `close lid` are about
    `lid`, `turn on lamp` and `turn lamp off` about `lamp`); the whole command when it names nothing (`pray`)."""
    words = canonical.split()
    return " ".join(word for word in words[1:] if word not in PARTICLES) or canonical
