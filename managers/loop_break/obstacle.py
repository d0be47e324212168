"""Obstacle retries: a player stuck on a puzzle comes back to the thing that turned it down with another verb or
another tool, again and again, between walks over ground it knows (zork1's locked grating: `open grating` refused,
then `cut grating with knife`, `pull grating`, `break grating with sword`, `unlock grating with rope`...).

A thing the game refused in a room (a command naming it answered as refused) is an obstacle there, when the game
refused it for what it is: not for being out of sight or out of hand (`You can't see any troll here!`, `You don't
have that!`: nothing there turned the player down), for being so already (`You already have that!`), or for a word
the parser does not know (`That's not a verb I recognise.`: it never got as far as the thing). The room is known by
its title, as a player knows it: zork1 has two rooms called Clearing, and a player stuck on the locked grating of one
tries to cut it in the other.

A retry is a command not made in that room before, naming an obstacle of the room, that the game refused again,
answered as doing nothing or did not understand (such answers again, not for a word the parser does not know): a
variant of a try the game already turned down. Looking at the obstacle never counts (that is how a player studies
it), nor does asking about it (a question is answered, not refused), a move (a wall met again is the repetition
rule's), or a command made there before (saying the same thing again is the repetition and signature rules'). A
player who searches tries new exits and new things; one who is stuck keeps rewording the one try that failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from managers.loop_break.detector import Detector, Stretch, Turn, register
from session.commands import (
    FUNCTION_WORDS,
    PARTICLES,
    QUESTION_PREFIXES,
    canonical_command,
    direction_of,
    is_observation,
)
from session.config import DetectorSection
from session.outcomes import NO_EFFECT, PARSER_FAILURE, REFUSED, moot, not_at_hand, unknown_word
from session.records import TurnRecord


class ObstacleConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.obstacle]`: the obstacle rule, a refused thing tried again and again in other
    words."""

    turns: int = Field(30, ge=0, le=100_000)
    """Stop (`stuck_no_progress`, rule `obstacle`) after this many turns without progress (on the stop rules' clock)
    when `retries` of them were retries: commands not made in that room before that named a thing the game had
    refused there (not for being out of sight, in hand already or named with a word it does not know) and that the
    game refused again, answered as doing nothing or asked more of (`ObstacleRetries`). A model stuck on a puzzle
    comes back to it between walks over ground it knows, rewording the try that failed. 0: no such rule."""
    retries: int = Field(2, ge=1, le=100_000)
    """Retries since the last progress that, once `turns` have passed, make the obstacle rule stop: the thing refused
    three times, in three ways."""

    @classmethod
    def stop_rule_off(cls) -> dict[str, Any]:
        return {"turns": 0}


FAILED_AGAIN = frozenset({REFUSED, NO_EFFECT, PARSER_FAILURE})
"""Answers by which a retry failed: turned down again, nothing came of it (`Nice try.`), or the parser asked for more
(`What do you want to cut the grating with?`)."""


def asks(command: str) -> bool:
    """The command asks a character or a book about something (`ask k9 about door`), or answers one."""
    return command.strip().lower().startswith(QUESTION_PREFIXES)


def things_named(canonical: str) -> tuple[str, ...]:
    """The words of a command (in canonical form) after its verb that name something: articles, pronouns and
    prepositions left out (`unlock grating with knife` -> grating, knife)."""
    return tuple(word for word in canonical.split()[1:] if word not in FUNCTION_WORDS and word not in PARTICLES)


@dataclass
class ObstacleRetries:
    """What the game turned down, room by room, over the whole episode, and the retries since the last restart."""

    obstacles: set[tuple[str, str]] = field(default_factory=set)
    """(room title, word) of every thing a command was turned down on there."""
    made: set[tuple[str, str]] = field(default_factory=set)
    """(room title, canonical command) of every command that tried something there."""
    retries: int = 0
    """Retries since the restart."""

    def restart(self) -> None:
        self.retries = 0

    def observe(self, record: TurnRecord) -> bool:
        """Take in one turn; whether it was a retry."""
        command = record.command
        if direction_of(command) is not None or is_observation(command) or asks(command):
            return False
        response = record.response
        if not_at_hand(response) or moot(response) or unknown_word(response):
            return False  # nothing there turned the player down
        room, canonical = record.room_name_before or str(record.room_id_before), canonical_command(command)
        things = things_named(canonical)
        retry = (
            bool(things)
            and (room, canonical) not in self.made
            and record.result_category in FAILED_AGAIN
            and any((room, thing) in self.obstacles for thing in things)
        )
        self.made.add((room, canonical))
        if record.result_category == REFUSED:
            self.obstacles.update((room, thing) for thing in things)
        self.retries += retry
        return retry


@register
class Obstacle(Detector):
    """The obstacle rule: a thing the game refused, tried again and again in other words."""

    name = "obstacle"
    config_model = ObstacleConfig
    stop_rule = "obstacle"
    config: ObstacleConfig

    def __init__(self, config: ObstacleConfig, tools):
        super().__init__(config, tools)
        self.retries = ObstacleRetries()

    def observe(self, turn: Turn) -> None:
        if turn.progress.progress:
            self.retries.restart()
        self.retries.observe(turn.record)

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        if not self.config.turns:
            return None
        retries, clock = self.retries.retries, stretch.clock(turns_stuck)
        if retries >= self.config.retries and clock >= self.config.turns:
            return f"no progress for {turns_stuck} turns, {retries} of them trying again what the game refused"
        return None

    def turns_to_stop(self, turns_stuck: int, stretch: Stretch) -> int | None:
        if not self.config.turns or self.retries.retries < self.config.retries:
            return None
        return self.config.turns - stretch.clock(turns_stuck)

    def pressure(self, turns_stuck: int, stretch: Stretch) -> dict[str, float]:
        if not self.config.turns:
            return {}
        clock = stretch.clock(turns_stuck) / self.config.turns
        return {"obstacle": min(clock, self.retries.retries / self.config.retries)}
