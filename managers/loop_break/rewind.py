"""After a rewind (`on_stuck = "rewind"`): what the abandoned loop did is off the table for a while, and the agent is
told so.

A loop is the same commands made again in the same situations. After the game is put back to the last progress,
each command the abandoned turns made more than once in one situation is refused in that situation for
`rewind_ban_turns` turns: the player must try something else where it went round before. A command made once (the
move that led away from the progress, a single try) stays allowed: the way forward may run through it.
"""

from __future__ import annotations

from collections import Counter
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
        """Ban what `abandoned` (the turns given up, oldest first) repeated, for `turns` turns after `turn`; `start`
        is the situation the first of them began in (the one the game is put back to)."""
        made: Counter[tuple[str, str]] = Counter()
        situation = start
        for record in abandoned:
            if record.ran:
                made[(situation, canonical_command(record.command))] += 1
            situation = record.situation or situation
        banned: dict[str, set[str]] = {}
        for (where, command), times in made.items():
            if times > 1:
                banned.setdefault(where, set()).add(command)
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
        "Where you repeated a command, it is refused in the same place for a while: try something different."
    )
