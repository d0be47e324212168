"""Progress velocity: the turn of the last progress is explicit state; the stuck check is O(1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from session.commands import is_wait
from session.config import ProgressSignal
from session.records import TurnRecord

SIGNALS = get_args(ProgressSignal)
"""Every progress signal, in the order they are reported. `score` and `objective` are read here, the others off the
turn record's novelty (managers.novelty)."""
WAIT_SIGNALS = frozenset({"score", "new_room", "objective"})
"""What a wait can make progress by: the points of an awaited event, a vehicle reaching a new room, a verified
objective. A wait does nothing itself, so whatever else changes meanwhile is the game's doing (zork1's thief taking
a guidebook kept a player who only waits going for 39 turns); the idle replay cannot tell it apart, the wait being
the idle turn. The command after the event (`open door`, `take feather`) is the progress. Measured: no recorded
healthy or stuck run of the corpus ends at another turn."""


@dataclass(frozen=True)
class ProgressResult:
    turn: int
    signals: tuple[str, ...]
    """The progress signals that fired this turn (empty: no progress)."""
    turns_stuck: int
    """Turns since the last progress, after this turn."""
    last_progress_turn: int

    @property
    def progress(self) -> bool:
        return bool(self.signals)


class ProgressTracker:
    """Which signals count is configuration (`progress_signals`); each is read off the turn record.

    `score` fires when the score reaches a value this episode never had (any direction, as in design 000,
    docs/design.md; but taking and dropping a treasure in a loop is not progress twice).
    """

    def __init__(self, signals: set[str]):
        self.signals = signals
        self.last_progress_turn = 0
        self.scores: set[int] = set()

    def observe(self, record: TurnRecord) -> ProgressResult:
        signals = self.signals & WAIT_SIGNALS if is_wait(record.command) else self.signals
        self.scores.add(record.score_before)
        new_score = record.score_changed and record.score_after not in self.scores
        self.scores.add(record.score_after)
        happened = {"score": new_score, "objective": bool(record.objectives_completed)}
        happened["new_room"] = record.new_room or "new_room" in record.novelty
        happened["new_world_state"] = record.new_world_state or "new_world_state" in record.novelty
        fired = tuple(name for name in SIGNALS if name in signals and happened.get(name, name in record.novelty))
        if fired:
            self.last_progress_turn = record.turn
        return ProgressResult(record.turn, fired, record.turn - self.last_progress_turn, self.last_progress_turn)

    def turns_stuck(self, turn: int) -> int:
        return turn - self.last_progress_turn
