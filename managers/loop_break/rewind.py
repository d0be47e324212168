"""After a rewind (`on_stuck = "rewind"`): what the abandoned turns did is off the table for a while, and the agent is
told so.

A human player who restores an earlier save tries something else. After the game is put back to the last progress,
each command the abandoned turns made is refused in the situation it was made in, for `rewind_ban_turns` turns:
from the restored point on, the player must take another step wherever it stood before, so play leaves the old
track at once instead of walking it again. Rewinds back to the same point add up their bans. A ban never walls the
player in: when every way out of a room would be refused, the ways out stay allowed (LoopBreak._rewind_banned).
Measured with benchmarks/rewind.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from session.commands import canonical_command
from session.records import TurnRecord

REWOUND = "REWOUND"
"""Opens the harness note after a rewind (the agent's context, while the bans last and no progress came)."""


@dataclass
class RewindBans:
    """The commands refused after the last rewind, by situation, and the note that says why."""

    until: int = 0
    """The first turn the bans no longer hold."""
    by_situation: dict[str, frozenset[str]] = field(default_factory=dict)
    """Situation (TurnRecord.situation) -> canonical commands refused there."""
    note: str = ""

    def start(self, turn: int, turns: int, start: str, abandoned: Sequence[TurnRecord], note: str) -> None:
        """Ban what `abandoned` (the turns given up, oldest first) did, each command in the situation it was made in,
        for `turns` turns after `turn`; `start` is the situation the first of them began in (the one the game is put
        back to)."""
        banned: dict[str, set[str]] = {}
        if self.active(turn):  # a rewind while the last one's bans hold: the two add up
            banned = {where: set(commands) for where, commands in self.by_situation.items()}
        situation = start
        for record in abandoned:
            if record.ran:
                banned.setdefault(situation, set()).add(canonical_command(record.command))
            situation = record.situation or situation
        self.by_situation = {where: frozenset(commands) for where, commands in banned.items()}
        self.until = turn + 1 + turns
        self.note = note

    def active(self, turn: int) -> bool:
        return turn < self.until

    def banned(self, situation: str, turn: int) -> frozenset[str]:
        """Canonical commands refused in `situation` at `turn`."""
        return self.by_situation.get(situation, frozenset()) if self.active(turn) else frozenset()

    def end(self) -> None:
        """Progress: the note has done its work (the bans still hold until they run out)."""
        self.note = ""


def rewind_note(abandoned: Sequence[TurnRecord], back_to: int, room: str, score: int) -> str:
    """The harness note: what the abandoned turns tried, and that it led nowhere."""
    tried = list(dict.fromkeys(canonical_command(r.command) for r in abandoned if r.ran))
    shown = ", ".join(tried[:12]) + (", ..." if len(tried) > 12 else "")
    return (
        f"{REWOUND}: your last {len(abandoned)} turns made no progress, so the harness put the game back exactly as "
        f"it was after turn {back_to} ({room}, score {score}). What you tried meanwhile led nowhere: {shown}. "
        "For a while, what you did there is refused in the same situation: try something different."
    )
