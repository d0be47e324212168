"""Refused again: the command the game just turned down, said again at once and turned down alike.

A model stuck in zork1's coal mine sent every command twice: each wall it walked into, it walked into again on the
next turn, for a hundred turns. The second try of a refusal changes nothing by construction: the same command, from
the state the refusal left, the same answer word for word, nothing in the world moved. One such turn is a slip
(`yodel` twice, `learn fweep` again and again in Sorcerer, which the game answers alike while the spell sinks in);
many of them since the last progress are a player not reading what the game says.

A turn counts when its command, canonically, is the previous turn's, the previous turn was refused, answered as doing
nothing, blocked or not understood, this turn's answer is the previous answer again (whitespace aside) and the world's
state did not change. Looks, inventories, examinations and waits never count (saying them again is harmless), nor does
a turn after one that ran nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import Field

from managers.loop_break.detector import Detector, Stretch, Turn, register
from session.commands import canonical_command, is_observation, is_wait
from session.config import DetectorSection
from session.outcomes import DEATH, PROBLEMATIC
from session.records import TurnRecord


class RefusedAgainConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.refused_again]`: the refused-again rule, a refusal said again at once."""

    times: int = Field(7, ge=0, le=100_000)
    """Stop (`stuck_no_progress`, rule `refused_again`) when this many turns since the last progress said again,
    at once, the command the game had just refused (or answered as doing nothing, blocked, not understood), got the
    same answer word for word and changed nothing in the world; looks, inventories, examinations and waits never
    count. 0: no such rule."""
    turns: int = Field(16, ge=0, le=100_000)
    """Turns without progress (on the stop rules' clock) before the refused-again rule may stop."""

    @classmethod
    def stop_rule_off(cls) -> dict[str, Any]:
        return {"times": 0}


REFUSALS = PROBLEMATIC - {DEATH}
"""Answers whose repetition at once is refused again: refused, no effect, a blocked exit, not understood."""


@dataclass
class RefusalsRepeated:
    """The turns since the last restart that said a refusal again at once."""

    count: int = 0
    previous: TurnRecord | None = None
    """The last turn that ran."""

    def restart(self) -> None:
        self.count = 0

    def observe(self, record: TurnRecord) -> bool:
        """Take in one turn; whether it said the previous refusal again, alike."""
        previous, self.previous = self.previous, (record if record.ran else None)
        if previous is None or not record.ran or previous.result_category not in REFUSALS:
            return False
        command = record.command
        again = (
            not (is_observation(command) or is_wait(command))
            and canonical_command(command) == canonical_command(previous.command)
            and record.response.split() == previous.response.split()
            and record.world_hash_after == record.world_hash_before
        )
        self.count += again
        return again


@register
class RefusedAgain(Detector):
    """The refused-again rule: the same refusal asked for again at once, again and again."""

    name = "refused_again"
    config_model = RefusedAgainConfig
    stop_rule = "refused_again"
    config: RefusedAgainConfig

    def __init__(self, config: RefusedAgainConfig, tools):
        super().__init__(config, tools)
        self.repeated = RefusalsRepeated()

    def observe(self, turn: Turn) -> None:
        if turn.progress.progress:
            self.repeated.restart()
        self.repeated.observe(turn.record)

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        times, count = self.config.times, self.repeated.count
        if times and count >= times and stretch.clock(turns_stuck) >= self.config.turns:
            return f"no progress for {turns_stuck} turns, {count} of them saying again what the game had just refused"
        return None

    def turns_to_stop(self, turns_stuck: int, stretch: Stretch) -> int | None:
        if not self.config.times or self.repeated.count < self.config.times:
            return None
        return self.config.turns - stretch.clock(turns_stuck)

    def pressure(self, turns_stuck: int, stretch: Stretch) -> dict[str, float]:
        if not self.config.times:
            return {}
        clock = stretch.clock(turns_stuck) / max(1, self.config.turns)
        return {"refused_again": min(clock, self.repeated.count / self.config.times)}
