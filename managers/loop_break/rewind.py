"""After a rewind (`on_stuck = "rewind"`): what the abandoned turns did is off the table for a while, and the agent is
told so.

A human player who restores an earlier save tries something else. After the game is put back to the last progress,
each command the abandoned turns made is refused in the situation it was made in, for `rewind_ban_turns` turns:
from the restored point on, the player must take another step wherever it stood before, so play leaves the old
track at once instead of walking it again. Rewinds back to the same point add up their bans. A ban never walls the
player in: when every way out of a room would be refused, the ways out stay allowed (LoopBreak._rewind_banned).
Measured with benchmarks/studies/rewind.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from session.commands import canonical_command
from session.config import LoopBreakConfig
from session.events import EventType, new_event
from session.game import GameSession
from session.records import LOOP_ENDINGS, Ending, GameView, TurnRecord
from session.snapshots import Snapshot

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


@dataclass(frozen=True)
class ProgressPoint:
    """The game right after a progress turn (turn 0: the reset), as a rewind restores it."""

    snapshot: Snapshot
    turn: int
    situation: str
    """TurnRecord.situation after that turn: where the abandoned turns began."""


@dataclass(frozen=True)
class Rewound:
    """What one rewind did: the game is back at `point`, showing `view`; `abandoned` are the turns given up."""

    point: ProgressPoint
    abandoned: tuple[TurnRecord, ...]
    view: GameView
    note: str
    """What the agent is told (rewind_note)."""
    events: tuple[dict, ...] = ()
    """The rewind's event."""


class Rewinder:
    """`on_stuck = "rewind"`: where a rewind goes back to (the game right after the last progress), the turns it
    would abandon, whether a stop verdict may rewind instead, and the restore itself. With `on_stuck = "end"` it
    keeps nothing (a loop the loop break lets run would otherwise keep every turn)."""

    def __init__(self, config: LoopBreakConfig, session: GameSession):
        self.enabled = config.on_stuck == "rewind"
        self.max_rewinds = config.max_rewinds
        self.session = session
        self.point: ProgressPoint | None = None
        self.abandoning: list[TurnRecord] = []
        """The turns since the last progress: a rewind abandons them."""
        self.rewinds = 0
        self.abandoned_turns = 0
        self.rewound_to: set[int] = set()
        """The turns rewinds went back to (a point is gone back to once)."""

    def mark(self, turn: int, situation: str) -> None:
        """The game now, right after a progress turn (0: the reset), is where a rewind would go back to."""
        if self.enabled:
            self.point = ProgressPoint(self.session.snapshot(), turn, situation)
            self.abandoning = []

    def observe(self, record: TurnRecord, progress: bool) -> None:
        """One executed turn: a progress turn is the new point, any other is one more a rewind would abandon."""
        if progress:
            self.mark(record.turn, record.situation)
        elif self.enabled:
            self.abandoning.append(record)

    def may_rewind(self, reason: Ending | None) -> bool:
        """A loop's stop verdict, rewinds left, and progress since the last rewind: a point is gone back to once
        (measured on the corpus's stuck trajectories: a first return to a point reached new progress within 40
        turns 430 times in 892, a return to the same point again 64 times in 455)."""
        if not self.enabled or reason not in LOOP_ENDINGS or self.rewinds >= self.max_rewinds:
            return False
        return self.point.turn not in self.rewound_to

    def rewind(self, record: TurnRecord, reason: Ending, rule: str | None, why: str) -> Rewound:
        """Put the game back exactly as it was right after the last progress (after `record`'s turn ended in a stop
        verdict); the turns since stay in the records, their branch abandoned. Raises EmulatorFailed when the
        restore's emulator fails."""
        point, abandoned = self.point, tuple(self.abandoning)
        view, how = self.session.restore(point.snapshot)
        self.rewinds += 1
        self.rewound_to.add(point.turn)
        self.abandoned_turns += len(abandoned)
        self.abandoning = []
        event = new_event(
            EventType.REWIND,
            f"Rewind {self.rewinds}: {why or reason}; back to turn {point.turn} "
            f"({view.room_name}, score {view.score}), {len(abandoned)} turns abandoned",
            level="WARNING",
            turn=record.turn,
            to_turn=point.turn,
            abandoned=len(abandoned),
            branch=record.branch,
            rewinds=self.rewinds,
            reason=reason,
            rule=rule,
            why=why,
            restored=how,
        )
        note = rewind_note(abandoned, point.turn, view.room_name, view.score)
        return Rewound(point, abandoned, view, note, (event,))
