"""The repetition rule: play that does again what it did since the last progress, from the same situation, stops
sooner than the backstop. The window it reads is the stretch's (window.py: every detector shares it); this module
also tells of wandering loops, over more rooms than a region loop holds."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from managers.loop_break.detector import Detector, Events, Stretch, Turn, register
from managers.loop_break.window import RepetitionResult
from session.config import DetectorSection, LoopBreakConfig
from session.events import EventType, new_event


class RepetitionConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.repetition]`: the repetition window and its stop rule."""

    enabled: bool = True
    """Stop sooner when play repeats itself: all but `misses` of the last `window` turns did
    again what they had done since the last progress from the same situation (same room, inventory and objects), or
    walked between two known rooms as the episode already had, and `min_turns` passed without progress.
    Also detects wandering loops (more rooms than room_loops.region_max_rooms) and penalises repeated moves."""
    window: int = Field(18, ge=2, le=1000)
    """Recent turns examined for the repetition rule: all but `misses` of them must repeat."""
    misses: int = Field(1, ge=0, le=1000)
    """Turns of the repetition window that may be new while it still counts as repeating: a random walk that takes
    a door it had not taken from there, a character who changes the room once."""
    stop: bool = True
    """False: the window still feeds the trek rule, wandering detections and the repeat penalties, but its stop rule
    never ends an episode."""
    min_turns: int = Field(14, ge=1, le=100_000)
    """Turns without progress before the repetition rule may stop the episode (must be below no_progress.max_turns)."""

    @classmethod
    def stop_rule_off(cls) -> dict[str, Any]:
        return {"stop": False}

    @model_validator(mode="after")
    def _check_relations(self) -> RepetitionConfig:
        if self.misses >= self.window:
            raise ValueError(f"misses ({self.misses}) must be < window ({self.window})")
        return self

    def check_with(self, table: LoopBreakConfig) -> None:
        """The rule may stop before the backstop does."""
        max_turns = table.no_progress.max_turns
        if self.min_turns > max_turns:
            raise ValueError(f"repetition.min_turns ({self.min_turns}) must be <= no_progress.max_turns ({max_turns})")


@register
class Repetition(Detector):
    """The repetition rule: the window (the stretch's) repeating what the turns since the last progress did, and
    wandering loops over more rooms than a region loop holds."""

    name = "repetition"
    config_model = RepetitionConfig
    stop_rule = "repetition"
    events = {EventType.LOOP_DETECTED: "detection"}
    config: RepetitionConfig

    def __init__(self, config: RepetitionConfig, tools):
        super().__init__(config, tools)
        self.previous = RepetitionResult(0, 0)

    def observe(self, turn: Turn) -> Events:
        if not self.config.enabled:
            return ()
        previous, now = self.previous, turn.stretch.repeating
        self.previous = now
        max_rooms = turn.stretch.config.room_loops.region_max_rooms
        if _wandering(now, max_rooms) and not _wandering(previous, max_rooms):
            names = ", ".join(self.tools.game_map.name_of(room) for room in now.rooms)
            return (
                new_event(
                    EventType.LOOP_DETECTED,
                    f"Loop detected: wandering over {len(now.rooms)} rooms ({names})",
                    level="WARNING",
                    turn=turn.record.turn,
                    kind="wandering",
                    detail=names,
                    rooms=list(now.rooms),
                    turns_stuck=turn.progress.turns_stuck,
                ),
            )
        return ()

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        repeating = stretch.repeating
        if self.config.stop and repeating.repeating and stretch.repetition_clock(turns_stuck) >= self.config.min_turns:
            detail = f"{repeating.repeats} of the last {repeating.window} repeating what they did before"
            return f"no progress for {turns_stuck} turns, {detail}"
        return None

    def turns_to_stop(self, turns_stuck: int, stretch: Stretch) -> int | None:
        if not (self.config.enabled and self.config.stop):
            return None
        until_min_turns = self.config.min_turns - stretch.repetition_clock(turns_stuck)
        return max(until_min_turns, stretch.window.turns_until_repeating())

    def pressure(self, turns_stuck: int, stretch: Stretch) -> dict[str, float]:
        if not (self.config.enabled and self.config.stop):
            return {}
        needed = self.config.window - self.config.misses
        clock = stretch.repetition_clock(turns_stuck) / max(1, self.config.min_turns)
        return {"repetition": min(clock, stretch.window.repeats_so_far() / needed)}


def _wandering(result: RepetitionResult, max_rooms: int) -> bool:
    """Going round more rooms than a region loop holds, the repetition window repeating."""
    return result.repeating and len(result.rooms) > max_rooms
