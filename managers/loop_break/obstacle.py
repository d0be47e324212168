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

from session.commands import (
    FUNCTION_WORDS,
    PARTICLES,
    QUESTION_PREFIXES,
    canonical_command,
    direction_of,
    is_observation,
)
from session.outcomes import NO_EFFECT, PARSER_FAILURE, REFUSED, moot, not_at_hand, unknown_word
from session.records import TurnRecord

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
