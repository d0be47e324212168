"""Adjusting the critic's score of a proposal (the detectors' penalties and bonuses), refusing one outright, and
why a proposal was turned down, in plain words for the agent."""

from __future__ import annotations

from dataclasses import dataclass, replace

from session.events import EventType, new_event
from session.records import Judgement

PLAIN_WORDS = {
    "Oscillation penalty": "it goes back into rooms you keep going back and forth between",
    "Camping penalty": "it goes back to the room you have spent most of the last turns in",
    "Region-loop penalty": "it stays among the few rooms you have been circling without progress",
    "Revisit penalty": "you were there a few turns ago",
    "Repeat penalty": "you already made this move from here since your last progress",
    "Action-loop penalty": "it keeps failing",
}
"""What each penalty means, for the agent's list of this turn's rejections (the records keep the penalty names)."""


OVERRIDE = " [Loop Detection Override: "
"""Opens the penalties appended to a judgement's reason in the records (design 000's wording, docs/design.md)."""


def why_rejected(judgement: Judgement, threshold: float) -> str:
    """Why a proposal was turned down, for the agent: the critic's reason when it scored it low, the penalties in
    plain words when they did (never the penalty names and numbers of the records)."""
    critic = judgement.reason.split(OVERRIDE)[0]
    harness = plain_words(judgement.adjustments)
    if not harness:
        return critic
    if judgement.base >= threshold:
        return f"the harness turned it down: {harness}"
    return f"{critic} (also: {harness})"


def plain_words(adjustments: tuple[str, ...]) -> str:
    """The penalties among `adjustments` (`Revisit penalty (Kitchen visited recently) -0.20`) in plain words."""
    said = [words for adjustment in adjustments for name, words in PLAIN_WORDS.items() if adjustment.startswith(name)]
    return "; ".join(dict.fromkeys(said))


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
        reason=f"{judgement.reason}{OVERRIDE}{'; '.join(reasons)}]",
    )


@dataclass(frozen=True)
class Judged:
    """A proposal's judgement after the loop break, with the events that raised."""

    judgement: Judgement
    events: tuple[dict, ...] = ()


def block(command: str, source: str, reason: str, turn: int) -> Judged:
    """A judgement that rejects `command` outright (`source` among BLOCKING_SOURCES), with its event."""
    event = new_event(  # DEBUG: one per blocked proposal, several a turn while looping; the record keeps every one
        EventType.COMMAND_BLOCKED,
        f"Blocked '{command}': {reason}",
        level="DEBUG",
        turn=turn,
        action=command,
        source=source,
        reason=reason,
    )
    return Judged(Judgement(0.0, reason, source=source, adjustments=(reason,)), (event,))
