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

from session.commands import canonical_command, direction_of, is_wait, tries_something


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
