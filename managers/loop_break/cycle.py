"""Command cycles: the player says the same few commands in the same order, round after round.

The repetition detector compares situations, and a game can keep those new while the player loops: zork2's carousel
and advent's Bedquilt send a move to a random room, a clock or a counter ticks on every turn, a fog carries the player
off and the same examinations go on there. A player whose commands come round in the same order for many turns is not
reading the answers, whatever the game does meanwhile. Only what the command itself brought about breaks a cycle
(BREAKING_SIGNALS), and a cycle whose moves each reach a room it had not reached is a walk (a long corridor taken
with a look in every room), not a loop.

Measured over every optimal and noisy walkthrough of the corpus (1,120 runs, seeds 1-31): the longest stretch of
commands coming round in the same order is 11 turns with two commands a round (temple's noisy seed 20, a step out and
back five times), 9 with three, 11 with four and five (seastalker's sonar and course), 12-18 with 6-12; past three
commands a round, never three rounds.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import Any

from pydantic import Field

from managers.loop_break.detector import Detector, Stretch, Turn, register
from managers.novelty import response_key
from session.commands import canonical_command, direction_of, is_wait
from session.config import DetectorSection
from session.outcomes import SUCCESS
from session.records import TurnRecord

BREAKING_SIGNALS = frozenset(
    {"score", "objective", "new_information", "new_position", "new_arrangement", "new_object_state"}
)
"""Progress that breaks a command cycle: points, a verified objective, or an answer, a place inside one room id, an
arrangement of objects or a state of an object that the command brought about and the episode never had (weapon's
conversation, each `reply` followed by a look and an inventory, is a cycle of three that learns a line a round;
murdac's treasures carried to the kitchen in rounds of the same nine commands, each `drop all` leaving new ones
there). A loop of the same commands brings every object back to a state it had after one round. The rooms and
the game variables a cycle reaches come round with the game: the player, saying the same commands again, was not
after them."""


class CycleConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.cycle]`: the cycle rule, commands coming round in the same order."""

    turns: int = Field(16, ge=0, le=100_000)
    """Stop (`stuck_no_progress`) when the player's commands have come round in the same order, two or more commands
    a round, for this many turns and at least `rounds` rounds, with nothing among them that the commands
    themselves brought about (points, an objective, news, a new place inside one room id, a new arrangement; waits
    break a cycle too): a player not reading the answers, while the game keeps its rooms or state new (a carousel's
    random exits, a ticking clock). 0: off."""
    rounds: int = Field(3, ge=2, le=1000)
    """Rounds a command cycle must span, when they take more than `turns`."""
    max_period: int = Field(12, ge=2, le=1000)
    """The longest command cycle looked for, in commands. Longer rounds (a wandering loop out and back over seven
    rooms or more) are the repetition rule's: three of them take longer than its window does."""

    @classmethod
    def stop_rule_off(cls) -> dict[str, Any]:
        return {"turns": 0}


class CommandCycleCount:
    """The commands since the last wait or progress that breaks a cycle, and how far the cycles among them have come
    round in the same order."""

    def __init__(self, turns: int, rounds: int, max_period: int):
        self.turns = turns
        """Commands a cycle must span (0: the detector never finds one)."""
        self.rounds = rounds
        """Rounds a cycle must span, when they are longer than `turns`."""
        self.max_period = max_period
        """The longest cycle looked for, in commands (a cycle of one command is the repetition rule's)."""
        self.commands: deque[str] = deque(maxlen=max(turns, rounds * max_period))
        """The commands since the last wait or progress that breaks a cycle, newest last (canonical forms)."""
        self.entered: deque[Hashable | None] = deque(maxlen=self.commands.maxlen)
        """For each of those turns, the place a move entered: its room, or, where a room has no id (spirit, curses),
        the description the game answered with (None: no move, or it kept the room)."""
        self.runs = [0] * (max_period + 1)
        """runs[p]: how many of the newest commands in a row each equal the command p before it."""
        self._found: tuple[int, int] | None = None
        self._nearest: tuple[int, int] | None = None

    def observe(self, record: TurnRecord, signals: tuple[str, ...]) -> None:
        """One turn, with the progress signals it fired. A wait breaks a cycle: waiting among other commands is the
        wait rules'."""
        if self.turns <= 0:
            return
        if not BREAKING_SIGNALS.isdisjoint(signals) or is_wait(record.command):
            self.commands.clear()
            self.entered.clear()
            self.runs = [0] * (self.max_period + 1)
            self._found = self._nearest = None
            return
        command = canonical_command(record.command)
        for period in range(2, self.max_period + 1):
            same = len(self.commands) >= period and self.commands[-period] == command
            self.runs[period] = self.runs[period] + 1 if same else 0
        self.commands.append(command)
        self.entered.append(_entered(record, command))
        self._found, self._nearest = self._judge()

    def found(self) -> tuple[int, int] | None:
        """(commands a round, commands spanned) of a cycle that has spanned its turns and rounds and is no walk;
        None: no such cycle."""
        return self._found

    def last_round(self, period: int) -> list[str]:
        """The newest `period` commands, oldest first: one round of a cycle of that many commands."""
        return list(self.commands)[-period:] if period > 0 else []

    def nearest(self) -> tuple[int, int] | None:
        """(turns until it spans enough, commands a round) of the cycle going on for two rounds or more that is
        nearest to spanning enough, if it goes on; None: no such cycle."""
        return self._nearest

    def nearness(self) -> float:
        """How far the cycle of two rounds or more that is nearest to spanning enough has gone: the commands it spans
        over those it needs (1.0 or more: found); 0.0 when there is none."""
        newest = list(self.commands)
        best = 0.0
        for period in range(2, self.max_period + 1):
            span = self.runs[period] + period
            if span < 2 * period or len(set(newest[-period:])) == 1 or self._walk(span):
                continue
            best = max(best, span / max(self.turns, self.rounds * period))
        return best

    def _judge(self) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
        """found() and nearest() after the newest command: only a cycle of two rounds or more counts."""
        found, nearest = None, None
        newest = list(self.commands)
        for period in range(2, self.max_period + 1):
            span = self.runs[period] + period
            if span < 2 * period or len(set(newest[-period:])) == 1:
                continue
            needed = max(self.turns, self.rounds * period)
            if found is None and span >= needed and not self._walk(needed):
                found = (period, span)
            candidate = (max(0, needed - span), period)
            if (nearest is None or candidate < nearest) and not self._walk(span):
                nearest = candidate
        return found, nearest

    def _walk(self, span: int) -> bool:
        """The moves of the newest `span` turns (two or more) each entered a room none of the others entered."""
        rooms = [room for room in list(self.entered)[-span:] if room is not None]
        return len(rooms) > 1 and len(set(rooms)) == len(rooms)


def _entered(record: TurnRecord, command: str) -> Hashable | None:
    """The place a move entered: the room, or the answer's text (numbers left out) where either room has no id, so a
    walk through rooms without ids is told from a loop between two of them; inside one room id, the spot a move
    walked to (the situation: hollywood's hedge maze keeps it in a variable). None: no move, or it went nowhere."""
    if direction_of(command) is None:
        return None
    if record.room_id_before is None or record.room_id_after is None:
        return ("text", response_key(record.response))
    if record.room_id_after == record.room_id_before:
        return ("spot", record.situation) if record.result_category == SUCCESS else None
    return record.room_id_after


@register
class Cycle(Detector):
    """The cycle rule: the player's commands coming round in the same order."""

    name = "cycle"
    config_model = CycleConfig
    stop_rule = "cycle"
    config: CycleConfig

    def __init__(self, config: CycleConfig, tools):
        super().__init__(config, tools)
        self.cycle = CommandCycleCount(config.turns, config.rounds, config.max_period)

    def observe(self, turn: Turn) -> None:
        self.cycle.observe(turn.record, turn.progress.signals)

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        found = self.cycle.found()
        if found is None:
            return None
        period, span = found
        return f"the same {period} commands in the same order for {span} turns"

    def turns_to_stop(self, turns_stuck: int, stretch: Stretch) -> int | None:
        nearest = self.cycle.nearest()
        return nearest[0] if nearest is not None else None

    def pressure(self, turns_stuck: int, stretch: Stretch) -> dict[str, float]:
        return {"cycle": self.cycle.nearness()} if self.cycle.turns > 0 else {}

    def warning_round(self, remaining: int) -> tuple[str, ...]:
        nearest = self.cycle.nearest()
        if nearest is None or nearest[0] > remaining:
            return ()
        return tuple(self.cycle.last_round(nearest[1]))
