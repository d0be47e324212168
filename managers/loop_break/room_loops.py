"""Room-loop detectors on Z-machine room ids: A-B-A-B oscillation, camping, and region loops.

Each is fed one record per turn and keeps a bounded window; `detect()` returns a typed result.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass

from managers.loop_break.progress import ProgressResult
from session.records import TurnRecord

NameOf = Callable[[int | None], str]


def _default_name(room_id: int | None) -> str:
    return f"Location_{room_id}"


@dataclass(frozen=True)
class OscillationResult:
    detected: bool
    pattern_ids: tuple[int, ...] = ()
    pattern_names: tuple[str, ...] = ()
    recent_locations: tuple[int | None, ...] = ()

    def describe(self) -> str:
        return " → ".join(self.pattern_names)


@dataclass(frozen=True)
class CampingResult:
    detected: bool
    camped_location_id: int | None = None
    camped_location_name: str = ""
    visit_count: int = 0
    window_size: int = 0

    def describe(self) -> str:
        return f"{self.camped_location_name} ({self.visit_count} of {self.window_size} turns)"


@dataclass(frozen=True)
class RegionLoopResult:
    detected: bool
    room_ids: tuple[int, ...] = ()
    room_names: tuple[str, ...] = ()
    window_size: int = 0
    visits: tuple[int, ...] = ()
    """Per-turn entries of each room in `room_ids`, same order."""

    def describe(self) -> str:
        return f"{', '.join(self.room_names)} ({self.window_size} turns, no new room, no progress)"


class OscillationDetector:
    """A-B-A-B in the last four per-turn locations (the room each turn ended in)."""

    def __init__(self) -> None:
        self.history: deque[int | None] = deque(maxlen=6)

    def observe(self, record: TurnRecord, progress: ProgressResult | None = None) -> None:
        self.history.append(record.room_id_after)

    def detect(self, name_of: NameOf = _default_name) -> OscillationResult:
        recent = tuple(self.history)
        if len(recent) >= 4:
            a, b, a2, b2 = recent[-4:]
            if a == a2 and b == b2 and a != b and None not in (a, b):
                return OscillationResult(True, (a, b), (name_of(a), name_of(b)), recent)
        return OscillationResult(False, recent_locations=recent)


class CampingDetector:
    """One room holding at least `threshold` of the last `window` per-turn locations."""

    def __init__(self, window: int, threshold: int):
        self.threshold = threshold
        self.history: deque[int | None] = deque(maxlen=window)

    def observe(self, record: TurnRecord, progress: ProgressResult | None = None) -> None:
        self.history.append(record.room_id_after)

    def detect(self, name_of: NameOf = _default_name) -> CampingResult:
        size = len(self.history)
        if size < self.threshold:
            return CampingResult(False, window_size=size)
        counts = Counter(room for room in self.history if room is not None)
        if not counts:
            return CampingResult(False, window_size=size)
        room_id, visits = counts.most_common(1)[0]
        if visits >= self.threshold:
            return CampingResult(True, room_id, name_of(room_id), visits, size)
        return CampingResult(False, window_size=size)


class RegionLoopDetector:
    """Shuttling among a few known rooms: over a full window, 2..max_rooms distinct rooms, none of them new,
    and no progress at all. Catches back-and-forth walks that are neither A-B-A-B nor camping."""

    def __init__(self, window: int, max_rooms: int):
        self.window = window
        self.max_rooms = max_rooms
        self.history: deque[int | None] = deque(maxlen=window)
        self.last_new_room_turn = 0
        self.last_progress_turn = 0
        self.turn = 0

    def observe(self, record: TurnRecord, progress: ProgressResult | None = None) -> None:
        self.history.append(record.room_id_after)
        self.turn = record.turn
        if record.new_room:
            self.last_new_room_turn = record.turn
        if progress is not None:
            self.last_progress_turn = progress.last_progress_turn

    def detect(self, name_of: NameOf = _default_name) -> RegionLoopResult:
        if len(self.history) < self.window:
            return RegionLoopResult(False, window_size=len(self.history))
        window_start = self.turn - self.window + 1
        if self.last_new_room_turn >= window_start or self.last_progress_turn >= window_start:
            return RegionLoopResult(False, window_size=self.window)
        counts = Counter(room for room in self.history if room is not None)
        if not 2 <= len(counts) <= self.max_rooms:
            return RegionLoopResult(False, window_size=self.window)
        rooms = tuple(sorted(counts))
        return RegionLoopResult(
            True, rooms, tuple(name_of(r) for r in rooms), self.window, tuple(counts[r] for r in rooms)
        )
