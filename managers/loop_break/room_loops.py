"""Room loops on Z-machine room ids: A-B-A-B oscillation, camping and region loops, and the penalties and bonuses
that steer out of them (the `RoomLoops` detector).

Each count is fed one record per turn and keeps a bounded window; `detect()` returns a typed result.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import Field, model_validator

from managers.loop_break.detector import Detector, Events, Moment, ScoredProposal, Stretch, Turn, register
from managers.loop_break.penalties import adjust_score
from managers.loop_break.progress import ProgressResult
from session.commands import direction_of
from session.config import DetectorSection
from session.events import EventType, new_event
from session.records import Judgement, TurnRecord


class RoomLoopsConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.room_loops]`: the room-loop detectors (oscillation, camping, region) and the
    penalties and bonuses that steer out of loops."""

    enabled: bool = True
    """Room-loop detectors (oscillation, camping, region) and their penalties."""
    oscillation_return_penalty: float = Field(-0.8, ge=-1.0, le=0.0)
    """Added to the critic score of a move back into an A-B-A-B oscillation."""
    oscillation_exploration_bonus: float = Field(0.5, ge=0.0, le=1.0)
    """Added to the critic score of a move out of an oscillation to a room outside it."""
    camping_return_penalty: float = Field(-0.6, ge=-1.0, le=0.0)
    """Added to the critic score of a move back into the camped room."""
    camping_threshold: int = Field(5, ge=1, le=1000)
    """Per-turn entries of one room within camping_window that count as camping."""
    camping_window: int = Field(10, ge=1, le=1000)
    """Recent turns examined for camping."""
    enable_location_penalty: bool = True
    """Penalise moves into a room visited within location_revisit_window turns."""
    location_revisit_penalty: float = Field(-0.2, ge=-1.0, le=0.0)
    """Added to the critic score of a move into a recently visited room."""
    location_revisit_window: int = Field(5, ge=1, le=1000)
    """Recent turns examined for the revisit penalty."""
    region_window: int = Field(20, ge=2, le=1000)
    """Recent turns examined for a region loop (shuttling among a few known rooms)."""
    region_max_rooms: int = Field(4, ge=2, le=100)
    """A window touching at least 2 and at most this many rooms, none new, with no progress, is a region loop."""
    region_loop_penalty: float = Field(-0.6, ge=-1.0, le=0.0)
    """Added to the critic score of a move that stays inside a looping region."""
    repeated_move_penalty: float = Field(-0.5, ge=-1.0, le=0.0)
    """Added to the critic score of a move the player already made from the same situation (or from the same room
    with the same things in hand) since the last progress, while at least half of the repetition window repeats
    (from penalty_min_turns_stuck on): steers out of loops of any size."""
    way_out_bonus: float = Field(0.5, ge=0.0, le=1.0)
    """Added instead, in the same state, to the next step of the map's way to the nearest room with untried exits
    outside the loop's rooms (every room since the last progress): leaving a loop often means walking through them, so
    that step gets none of the room-loop penalties, which would outweigh the bonus."""

    @model_validator(mode="after")
    def _check_relations(self) -> RoomLoopsConfig:
        if self.camping_threshold > self.camping_window:
            raise ValueError(
                f"camping_threshold ({self.camping_threshold}) must be <= camping_window ({self.camping_window})"
            )
        return self


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


class OscillationCount:
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


class CampingCount:
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


class RegionLoopCount:
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


@dataclass(frozen=True)
class Detections:
    """The room-loop detections that are active this turn (already gated on turns without progress)."""

    oscillation: OscillationResult
    camping: CampingResult
    region: RegionLoopResult
    recent_rooms: tuple[int | None, ...] = ()
    """Per-turn locations within location_revisit_window, for the revisit penalty."""

    @property
    def any(self) -> bool:
        return self.oscillation.detected or self.camping.detected or self.region.detected


def apply_loop_penalties(
    judgement: Judgement, destination: int | None, detections: Detections, config: RoomLoopsConfig, name_of
) -> Judgement:
    """The judgement with every applicable adjustment added and the sum clamped to [0, 1].

    No destination (not a move, or unknown) means no adjustment.
    """
    return adjust_score(judgement, room_loop_deltas(destination, detections, config, name_of))


def room_loop_deltas(
    destination: int | None, detections: Detections, config: RoomLoopsConfig, name_of
) -> list[tuple[float, str]]:
    """(delta, reason) for every room-loop adjustment that applies to a move into `destination`."""
    deltas: list[tuple[float, str]] = []
    if destination is None:
        return deltas
    oscillation = detections.oscillation
    if oscillation.detected:
        if destination in oscillation.pattern_ids:
            pattern = " → ".join(oscillation.pattern_names)
            deltas.append((config.oscillation_return_penalty, f"Oscillation penalty (pattern: {pattern})"))
        else:
            deltas.append((config.oscillation_exploration_bonus, "Exploration bonus (leaves the oscillation)"))
    camping = detections.camping
    if camping.detected and destination == camping.camped_location_id:
        deltas.append((config.camping_return_penalty, f"Camping penalty (returning to {camping.camped_location_name})"))
    region = detections.region
    if region.detected and destination in region.room_ids:
        deltas.append((config.region_loop_penalty, f"Region-loop penalty (stays in {', '.join(region.room_names)})"))
    if config.enable_location_penalty and destination in detections.recent_rooms:
        deltas.append((config.location_revisit_penalty, f"Revisit penalty ({name_of(destination)} visited recently)"))
    return deltas


NO_DETECTIONS = Detections(OscillationResult(False), CampingResult(False), RegionLoopResult(False))


@register
class RoomLoops(Detector):
    """Oscillation, camping and region loops over the rooms, and the penalties and bonuses that steer out of them
    (also out of loops of any size, while the repetition window repeats)."""

    name = "room_loops"
    config_model = RoomLoopsConfig
    events = {EventType.LOOP_DETECTED: "detection"}
    config: RoomLoopsConfig

    def __init__(self, config: RoomLoopsConfig, tools):
        super().__init__(config, tools)
        self.oscillation = OscillationCount()
        self.camping = CampingCount(config.camping_window, config.camping_threshold)
        self.region = RegionLoopCount(config.region_window, config.region_max_rooms)
        self.recent_rooms: deque[int | None] = deque(maxlen=config.location_revisit_window)
        self.active: Detections = NO_DETECTIONS
        """The room-loop detections that are active this turn."""
        self.destination: int | None = None
        """The room the last proposal adjusted would lead to, as predicted (None: not predicted)."""

    def observe(self, turn: Turn) -> Events:
        record, progress = turn.record, turn.progress
        for detector in (self.oscillation, self.camping, self.region):
            detector.observe(record, progress)
        self.recent_rooms.append(record.room_id_after)
        previous = self.active
        stuck = progress.turns_stuck >= turn.stretch.config.penalty_min_turns_stuck
        if not self.config.enabled or not stuck or not turn.stretch.steering:
            self.active = NO_DETECTIONS
            return ()
        name_of = self.tools.game_map.name_of
        self.active = Detections(
            self.oscillation.detect(name_of),
            self.camping.detect(name_of),
            self.region.detect(name_of),
            tuple(self.recent_rooms) if self.config.enable_location_penalty else (),
        )
        events = []
        for kind, now, before in (
            ("oscillation", self.active.oscillation, previous.oscillation),
            ("camping", self.active.camping, previous.camping),
            ("region_loop", self.active.region, previous.region),
        ):
            if now.detected and not before.detected:
                events.append(
                    new_event(
                        EventType.LOOP_DETECTED,
                        f"Loop detected: {kind} {now.describe()}",
                        level="WARNING",
                        turn=record.turn,
                        kind=kind,
                        detail=now.describe(),
                        turns_stuck=progress.turns_stuck,
                    )
                )
        return events

    def looping(self, turns_stuck: int, stretch: Stretch) -> bool:
        """Stuck for penalty_min_turns_stuck turns, and at least half of the recent turns repeat earlier ones (never
        while repetition detection is off: the window stays empty)."""
        if not self.config.enabled or not stretch.steering:
            return False
        return turns_stuck >= stretch.config.penalty_min_turns_stuck and stretch.repeating.share >= 0.5

    def adjust(self, proposal: ScoredProposal) -> list[tuple[float, str]]:
        command, view, stretch = proposal.command, proposal.view, proposal.stretch
        self.destination = None
        deltas: list[tuple[float, str]] = []
        looping = self.looping(proposal.turns_stuck, stretch)
        direction = direction_of(command)
        if looping and direction is not None and direction == self._way_out(view.room_id, stretch):
            # The way out of a loop runs through the loop's rooms: their penalties would wall it in.
            reason = "Way-out bonus (the next step towards the nearest room with untried exits outside the loop)"
            deltas.append((self.config.way_out_bonus, reason))
            return deltas
        if self.config.enabled and (self.active.any or self.active.recent_rooms):
            destination = self.tools.predictor.predict(view.room_id, command, view.world_hash)
            self.destination = destination
            deltas += room_loop_deltas(destination, self.active, self.config, self.tools.game_map.name_of)
        if looping and self._repeats_move(command, view.room_id, stretch):
            reason = "Repeat penalty (this move was already made from here since the last progress)"
            deltas.append((self.config.repeated_move_penalty, reason))
        return deltas

    def facts(self) -> dict[str, Any]:
        return {"destination": self.destination}

    def _way_out(self, room_id: int | None, stretch: Stretch) -> str | None:
        """The first step of the shortest known way to a room with untried exits outside the loop (every room since
        the last progress, so a round longer than the repetition window counts whole); None when there is none."""
        loop_rooms = frozenset(stretch.window.stretch_rooms)
        path = self.tools.game_map.path_to_frontier(room_id, avoid=loop_rooms)
        return path[0] if path else None

    def _repeats_move(self, command: str, room_id: int | None, stretch: Stretch) -> bool:
        """A move already made from here since the last progress, when another way out of here is still untried
        (a penalty must steer, never wall the agent in)."""
        window = stretch.window
        if not window.repeats_move(command):
            return False
        return any(not window.repeats_move(way) for way in self.tools.game_map.ways_out(room_id))

    def lines(self, moment: Moment) -> list[str]:
        return room_loop_lines(self.active) if self.looping(moment.turns_stuck, moment.stretch) else []


def room_loop_lines(detections: Detections) -> list[str]:
    """The room loops going on, in plain words (shown only while the player repeats itself: a puzzle worked on in
    one room with new commands is no loop)."""
    lines = []
    if detections.oscillation.detected:
        rooms = " and ".join(dict.fromkeys(detections.oscillation.pattern_names))
        lines.append(f"You keep going back and forth between {rooms}.")
    if detections.camping.detected:
        camping = detections.camping
        lines.append(
            f"You have spent {camping.visit_count} of the last {camping.window_size} turns in "
            f"{camping.camped_location_name}, repeating what you did before."
        )
    if detections.region.detected:
        lines.append(f"You keep to {', '.join(detections.region.room_names)} without progress or a new room.")
    return lines
