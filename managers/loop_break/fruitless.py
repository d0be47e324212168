"""Fruitless tries: a stretch of turns that keeps trying new things and gets nowhere (semi-novel stuck play).

Fed one turn at a time and restarted by progress. A try is a command that is no move, look, inventory or wait
(session.commands.tries_something), each counted once: saying the same thing again is the repetition rule's. The
share is of the turns less the waits (they try nothing) and the moves the repetition detector found made again
(walking to and fro between tries hides nothing), but never of less than half of them: a player who mostly steps into
a neighbour's room and back while looking at things is clumsy, not stuck (measured: without the half, noisy
walkthroughs with a step out and back as every other detour were stopped on lostpig and, sooner, on temple and
tryst205; with the waits counted, zork3's semi-novel loop begun after nine waits for the ship ran 64 turns).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from managers.loop_break.detector import Detector, Stretch, Turn, register
from session.commands import canonical_command, direction_of, is_wait, tries_something
from session.config import DetectorSection


class FruitlessConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.fruitless]`: the fruitless rule, new tries that get nowhere."""

    turns: int = Field(30, ge=0, le=100_000)
    """Stop after this many turns without progress (on the stop rules' clock) when at least `share` of
    them, less the waits and the moves made again (never less than half of them), tried something (no move, look,
    inventory or wait), each command counted once: play that keeps trying new things and gets nowhere (semi-novel stuck
    play), also when it walks to and fro between tries. 0: no such rule."""
    share: float = Field(0.8, gt=0.0, le=1.0)
    """The share of the turns since the last progress, less the waits and the moves made again (never less than half
    of them), for the fruitless rule: distinct commands that tried something."""

    @classmethod
    def stop_rule_off(cls) -> dict[str, Any]:
        return {"turns": 0}


@dataclass
class FruitlessTries:
    turns: int = 0
    """Turns since the restart."""
    waits: int = 0
    """Waits among them."""
    walked_again: int = 0
    """Moves among them that the repetition detector found made before."""
    tried: set[str] = field(default_factory=set)
    """Distinct commands among them that tried something."""

    def restart(self) -> None:
        self.turns = self.waits = self.walked_again = 0
        self.tried = set()

    def observe(self, command: str, walked_again: bool) -> None:
        self.turns += 1
        if is_wait(command):
            self.waits += 1
        elif direction_of(command) is not None:
            self.walked_again += walked_again
        elif tries_something(command):
            self.tried.add(canonical_command(command))

    @property
    def clock(self) -> int:
        """The turns that could have tried something: every wait left out."""
        return self.turns - self.waits

    def holds(self, share: float) -> bool:
        """At least `share` of the turns, less the waits and the moves made again (never less than half of them),
        tried something not tried since the restart."""
        turns = max(self.clock - self.walked_again, self.clock / 2)
        return turns > 0 and len(self.tried) >= share * turns

    def share_of(self, share: float) -> float:
        """The tries made over the tries `holds` needs (1.0 or more: it holds)."""
        turns = max(self.clock - self.walked_again, self.clock / 2)
        return len(self.tried) / (share * turns) if turns > 0 and share > 0 else 0.0


@register
class Fruitless(Detector):
    """The fruitless rule: turns without progress that keep trying new things."""

    name = "fruitless"
    config_model = FruitlessConfig
    stop_rule = "fruitless"
    config: FruitlessConfig

    def __init__(self, config: FruitlessConfig, tools):
        super().__init__(config, tools)
        self.tries = FruitlessTries()
        """What the turns since the last progress tried: none of it got anywhere."""
        self.across = FruitlessTries()
        """The same since the last progress by a signal other than the weak ones: a semi-novel loop whose walks reach
        rooms it had seen only with other things in hand (zork2's carousel) is one stretch."""

    def observe(self, turn: Turn) -> None:
        signals = turn.progress.signals
        walked_again = turn.stretch.window.moved_again  # never while repetition detection is off: it is not fed
        for tries, restart in (
            (self.tries, bool(signals)),
            (self.across, bool(set(signals) - turn.stretch.weak_signals)),
        ):
            if restart:
                tries.restart()
            else:
                tries.observe(turn.record.command, walked_again)

    def holding(self, turns_stuck: int, stretch: Stretch) -> list[tuple[FruitlessTries, int]]:
        """The counts whose share holds now, each with its clock: the turns since the last progress, on the stop
        rules' clock, and those since the last progress by a signal other than the weak ones, every wait left out.
        The rule fires when one of them reaches `turns`."""
        if not self.config.turns:
            return []
        counts = ((self.tries, stretch.clock(turns_stuck)), (self.across, self.across.clock))
        return [(tries, clock) for tries, clock in counts if tries.holds(self.config.share)]

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        tries = next((t for t, clock in self.holding(turns_stuck, stretch) if clock >= self.config.turns), None)
        if tries is None:
            return None
        if tries is self.across:
            weak = ", ".join(sorted(stretch.weak_signals))
            return f"no progress but {weak} for {tries.turns} turns, {len(tries.tried)} different things tried"
        return f"no progress for {turns_stuck} turns, {len(tries.tried)} different things tried in them"

    def turns_to_stop(self, turns_stuck: int, stretch: Stretch) -> int | None:
        clocks = [self.config.turns - clock for _, clock in self.holding(turns_stuck, stretch)]
        return min(clocks) if clocks else None

    def pressure(self, turns_stuck: int, stretch: Stretch) -> dict[str, float]:
        if not self.config.turns:
            return {}
        counts = ((self.tries, stretch.clock(turns_stuck)), (self.across, self.across.clock))
        return {"fruitless": max(min(clock / self.config.turns, t.share_of(self.config.share)) for t, clock in counts)}
