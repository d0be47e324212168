"""Snapshots: the game right after one turn, as plain data, which `JerichoSession.restore` brings back exactly.

`FrotzEnv.set_state` alone is not enough to bring a turn back. Frotz keeps two things outside the state it saves:
the output buffer, which still holds the end of the last text printed (sherlock's `>` prompt, a word of partyfoul's)
and begins the next response with it; and the keys typed for a `read_char` prompt beyond the first, which the next
`read_char` takes before any new command (sherlock's "press Y or N" answered `No` leaves `o`). So a snapshot keeps
its anchor, the state the latest command read as a line ran from (reading a line drops any keys left), and the
commands since reset: a restore sets the emulator to the anchor and plays the commands from there again (most often
just the last), and where that does not reach the snapshot's state (`state_digest`), a fresh emulator replays every
command since reset (`Restored`). Either way the state reached is checked against the snapshot's.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from session.emulator import Emulator
from session.records import GameView
from session.status import ScoreReading
from session.zmachine import WorldSnapshot


@dataclass(frozen=True)
class Fingerprint:
    """What a restored game must equal: where the player is, the score, what it holds, the object tree and
    the globals, every one of them (the noisy ones a game changes each turn too), and whether the game has ended."""

    room: int | None
    score: int
    inventory: tuple[int, ...]
    """Object numbers the player holds, in the game's order."""
    tree: str
    """MD5 of every object's parent, sibling, child and attributes (the whole table, past Jericho's object cap)."""
    globals: str
    """MD5 of the 240 global variables."""
    ended: tuple[bool, bool]
    """(game over, victory)."""

    @classmethod
    def of(
        cls, world: WorldSnapshot, room: int | None, score: int, player: int, ended: tuple[bool, bool]
    ) -> Fingerprint:
        """The fingerprint of `world`, read in a room with a score; `player` is the player's object number."""
        return cls(
            room=room,
            score=score,
            inventory=tuple(world.contents(player)) if player else (),
            tree=tree_digest(world),
            globals=hashlib.md5(world.globals.tobytes()).hexdigest(),
            ended=ended,
        )


def tree_digest(world: WorldSnapshot) -> str:
    """MD5 of every object's parent, sibling, child and attributes (the whole table, past Jericho's object cap)."""
    tree = hashlib.md5(world.parents.tobytes())
    for part in (world.siblings, world.children, world.attributes):
        tree.update(part.tobytes())
    return tree.hexdigest()


@dataclass(frozen=True, eq=False)
class Snapshot:
    """The game right after one turn, as `JerichoSession.restore` brings it back. Plain data: it outlives the
    emulator it was taken on and restores on any session of the same story file."""

    story_md5: str
    commands: tuple[str, ...]
    """Every command the emulator ran since reset, in order; the last is the turn this snapshot follows."""
    anchor: tuple | None
    """`FrotzEnv.get_state()` the latest command read as a line ran from (None: the reset): `restore` plays the
    commands from there. Most often the state the last command ran from; the module's docstring says why not always."""
    anchor_turn: int
    """How many commands had run at the anchor."""
    state: str
    """`state_digest` of the emulator after the last command: what a restore must reach."""
    view: GameView
    """What the last command (or the reset) gave: `restore` gives it back."""
    room: int | None
    """The room the session last saw the player in (it tells arrivals apart)."""
    titles: tuple[tuple[int, str], ...]
    """The room titles the session had learnt (`JerichoSession._titles`), so that later views read the same."""
    fingerprint: Fingerprint
    """What the restored game equals (the state digest holds all of it, and the rest of memory)."""
    reading: tuple[ScoreReading, bool, int | None]
    """What the session had read of the score without Jericho's bindings (the last reading, whether any, the
    maximum printed): a restored game is read as it was at the snapshot, not with what was printed after it."""

    @property
    def turn(self) -> int:
        """Commands run since reset."""
        return len(self.commands)

    @property
    def size(self) -> int:
        """Bytes of data held: the anchor's memory, stack and text, the response, the commands and the titles (the
        view's world arrays are shared with the view the session returned)."""
        anchor = self.anchor[0].nbytes + self.anchor[1].nbytes + len(self.anchor[-1]) if self.anchor else 0
        return (
            anchor + len(self.view.text) + sum(len(c) + 1 for c in self.commands) + sum(len(t) for _, t in self.titles)
        )


class Restored(StrEnum):
    """How `JerichoSession.restore` brought a snapshot back."""

    STATE = "state"
    """The emulator set to the snapshot's anchor, and the commands since played again (most often just the last)."""
    REPLAY = "replay"
    """A fresh emulator reset and every command since reset played again, as `--resume` does."""


class RestoreError(Exception):
    """A snapshot that cannot be brought back on this session: another story file, or a state neither way reaches."""


def state_digest(state: tuple) -> str:
    """MD5 of what the Z-machine runs on in `FrotzEnv.get_state()`: dynamic memory, the live part of the stack, the
    registers (pc, sp, fp, frame count, next opcode) and the random-number generator. The stack below its pointer is
    left out: what an earlier, deeper call left there is never read again (a reset leaves it behind)."""
    ram, stack, pc, sp, fp, frame_count, opcode, rng, _narrative = state
    digest = hashlib.md5(ram.tobytes())
    digest.update(stack[2 * sp :].tobytes())  # sp counts 16-bit words
    digest.update(repr((pc, sp, fp, frame_count, opcode, tuple(int(n) for n in rng))).encode())
    return digest.hexdigest()


class Replayable(Protocol):
    """The live session a snapshot is brought back on (JerichoSession)."""

    env: Emulator

    def reopen(self, fresh: bool = False) -> str:
        """Reset the emulator (a fresh one when `fresh`) as the game opens: the opening text."""


def reach(live: Replayable, snap: Snapshot, replay: bool) -> tuple[tuple | None, Restored]:
    """Bring the live emulator to `snap`'s state, as the module's docstring says: set to the anchor, else (or with
    `replay`, or after the live emulator failed) replayed from reset on a fresh one. Returns the state the last command
    ran from and how; raises RestoreError when neither way reaches the state (the session is then somewhere else)."""
    how = Restored.REPLAY if replay else Restored.STATE
    if not live.env.alive:  # it crashed since the snapshot (a command tried on it): a fresh one replays
        how = Restored.REPLAY
    if how is Restored.STATE:
        if snap.anchor is None:
            live.reopen()
        else:
            live.env.set_state(snap.anchor)
        before = _play(live.env, snap.commands[snap.anchor_turn :])
        if state_digest(live.env.get_state()) != snap.state:  # an emulator halted on an error keeps halting
            how = Restored.REPLAY
    if how is Restored.REPLAY:
        live.reopen(fresh=True)
        before = _play(live.env, snap.commands)
        if state_digest(live.env.get_state()) != snap.state:
            raise RestoreError(f"replaying {snap.turn} commands does not reach the snapshot's state")
    # what the C core read as the last response (some games' game-over test reads it)
    live.env.frotz_lib.set_narrative_text(snap.view.text.encode("cp1252"))
    return before, how


def _play(env: Emulator, commands: tuple[str, ...]) -> tuple | None:
    """Play `commands` on `env`, their text dropped; the state the last one ran from (None when there were none)."""
    before = None
    for command in commands:
        before = env.get_state()
        env.step(command)
    return before
