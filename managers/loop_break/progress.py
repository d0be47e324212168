"""Progress velocity: the turn of the last progress is explicit state; the stuck check is O(1)."""

from __future__ import annotations

from dataclasses import dataclass

from session.records import TurnRecord


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
    """Which signals count is configuration (`progress_signals`); each is read off the turn record."""

    def __init__(self, signals: set[str]):
        self.signals = signals
        self.last_progress_turn = 0
        self.last_signals: tuple[str, ...] = ()

    def observe(self, record: TurnRecord) -> ProgressResult:
        fired = tuple(
            name
            for name, happened in (
                ("score", record.score_changed),
                ("objective", bool(record.objectives_completed)),
                ("new_room", record.new_room),
                ("new_world_state", record.new_world_state),
            )
            if happened and name in self.signals
        )
        if fired:
            self.last_progress_turn = record.turn
            self.last_signals = fired
        return ProgressResult(record.turn, fired, record.turn - self.last_progress_turn, self.last_progress_turn)

    def turns_stuck(self, turn: int) -> int:
        return turn - self.last_progress_turn
