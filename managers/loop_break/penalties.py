"""Programmatic penalties and bonuses on the critic's score, from the active room-loop detections."""

from __future__ import annotations

from dataclasses import dataclass, replace

from session.config import LoopBreakConfig
from session.records import Judgement

from managers.loop_break.room_loops import CampingResult, OscillationResult, RegionLoopResult


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
    judgement: Judgement, destination: int | None, detections: Detections, config: LoopBreakConfig, name_of
) -> Judgement:
    """The judgement with every applicable adjustment added and the sum clamped to [0, 1].

    No destination (not a move, or unknown) means no adjustment.
    """
    return adjust_score(judgement, room_loop_deltas(destination, detections, config, name_of))


def room_loop_deltas(
    destination: int | None, detections: Detections, config: LoopBreakConfig, name_of
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


def adjust_score(judgement: Judgement, deltas: list[tuple[float, str]]) -> Judgement:
    """The judgement with `deltas` added (summed, then clamped to [0, 1]) and their reasons appended.

    The same judgement object comes back when no delta applies, so callers can tell "unchanged" by identity.
    """
    deltas = [(delta, reason) for delta, reason in deltas if delta != 0]
    if not deltas:
        return judgement
    # Rounded so that 0.7 - 0.2 is 0.5, not 0.49999999999999994.
    adjusted = round(max(0.0, min(1.0, judgement.score + sum(delta for delta, _ in deltas))), 6)
    reasons = tuple(f"{reason} {delta:+.2f}" for delta, reason in deltas)
    return replace(
        judgement,
        score=adjusted,
        base_score=judgement.base,
        adjustments=judgement.adjustments + reasons,
        reason=f"{judgement.reason} [Loop Detection Override: {'; '.join(reasons)}]",
    )
