"""Walkthrough progress: checkpoints read off a game's own walkthrough, and the share of them an episode reached.

Score is sparse: in 100 turns most games give no point to any player, so two episodes that got very different
distances tie at 0. The game's walkthrough says which places and points lie on the way to its end. Played on a fresh
emulator of the same story file under the walkthrough's own seed, it gives, in order, each room it first enters and
each new highest score (`derive`); each is a checkpoint, marked by game state alone (a room id, or a score value), so
an episode that took another way reaches it all the same. No outside data: only what the story file and its
walkthrough hold.

A game without a walkthrough has no checkpoints, and its progress is None, never 0: nothing says how far it is.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from session.commands import read_command
from session.emulator import DEFAULT_TIME_LIMIT
from session.jericho_session import JerichoSession


class CheckpointKind(StrEnum):
    """What marks a checkpoint."""

    ROOM = "room"
    """A room id: reached when the episode was ever in that room."""
    SCORE = "score"
    """A score value: reached when the episode's best score came to it."""


@dataclass(frozen=True)
class Checkpoint:
    """One place or score on the walkthrough's way."""

    kind: CheckpointKind
    value: int
    """The room id (ROOM) or the score (SCORE)."""
    step: int
    """The walkthrough step (1 = its first command) that first reached it."""
    name: str
    """What a person reads: the room's name, or `score N`."""


@dataclass(frozen=True)
class Progress:
    """How many of a game's checkpoints an episode reached."""

    reached: int
    total: int

    @property
    def share(self) -> float | None:
        """`reached / total`, 0..1; None when the game has no checkpoint (no walkthrough): nothing to measure by."""
        return self.reached / self.total if self.total else None

    def summary(self) -> dict:
        """summary.json's `progress` (the share, rounded) and `checkpoints` ({"reached": n, "total": m})."""
        share = self.share
        return {
            "progress": round(share, 4) if share is not None else None,
            "checkpoints": {"reached": self.reached, "total": self.total},
        }


@dataclass(frozen=True)
class Checkpoints:
    """A game's checkpoints under one seed, in the order its walkthrough reached them."""

    story_md5: str
    seed: int | None
    """The seed the walkthrough was played under (None: the game's walkthrough seed, as `JerichoSession` has it)."""
    walkthrough_steps: int
    """Commands in the walkthrough (0: the game has none)."""
    steps_played: int
    """Of them, those played before the game ended (a walkthrough may go on past its winning move)."""
    checkpoints: tuple[Checkpoint, ...]
    seconds: float = field(default=0.0, compare=False)
    """How long deriving them took (the emulator's start included): the clock's, not the game's."""

    @property
    def rooms(self) -> frozenset[int]:
        return frozenset(c.value for c in self.checkpoints if c.kind is CheckpointKind.ROOM)

    def marks(self) -> dict[str, list[int]]:
        """What marks each checkpoint, in the walkthrough's order: {"rooms": room ids, "scores": score values}. Kept
        in summary.json (`checkpoint_marks`) so that a reader of the records can measure progress turn by turn, as
        `reached` does at the end (the viewer's cost curves)."""
        return {
            "rooms": [c.value for c in self.checkpoints if c.kind is CheckpointKind.ROOM],
            "scores": [c.value for c in self.checkpoints if c.kind is CheckpointKind.SCORE],
        }

    def reached(self, rooms: Iterable[int | None], best_score: int) -> list[Checkpoint]:
        """The checkpoints an episode reached: a room it was ever in, a score its best score came to."""
        visited = set(rooms)
        return [
            c
            for c in self.checkpoints
            if (c.value in visited if c.kind is CheckpointKind.ROOM else best_score >= c.value)
        ]

    def progress(self, rooms: Iterable[int | None], best_score: int) -> Progress:
        """The share of checkpoints reached by an episode that visited `rooms` (room ids) with `best_score`."""
        return Progress(len(self.reached(rooms, best_score)), len(self.checkpoints))


def derive(story_file: str | Path, seed: int | None = None, time_limit: float = DEFAULT_TIME_LIMIT) -> Checkpoints:
    """Play the game's walkthrough (`JerichoSession.walkthrough`: Jericho's, or a `<story>.walkthrough` file beside
    it) on a fresh emulator of `story_file` under `seed`, reading rooms and score as an episode's session reads
    them, and keep each room first entered and each new highest score with the step that reached it.

    Blank "press a key" steps are played as steps, as the walkthrough agent plays them; a command the harness never
    runs (`why_not_run`) is skipped, as the orchestrator refuses it. Play stops where the game ends (won or lost), as
    an episode does. Raises what a session raises on a story file it cannot play (StoryFileError, EmulatorFailed)."""
    started = time.perf_counter()
    session = JerichoSession(story_file, seed=seed, time_limit=time_limit)
    try:
        commands = session.walkthrough()
        view = session.reset()
        # The room of turn 0 is left out: every episode starts there, so it would count for a player that never
        # moved. (A game whose player object shows only on a first walk learns that room then: `came_from`.)
        seen = {view.room_id}
        best = view.score
        found: list[Checkpoint] = []
        played = 0
        for step, command in enumerate(commands, start=1):
            if read_command(command).refusal is not None:
                continue
            view = session.step(command)
            played = step
            if view.came_from is not None:
                seen.add(view.came_from[0])
            if view.room_id is not None and view.room_id not in seen:
                seen.add(view.room_id)
                found.append(Checkpoint(CheckpointKind.ROOM, view.room_id, step, view.room_name))
            if view.score > best:
                best = view.score
                found.append(Checkpoint(CheckpointKind.SCORE, view.score, step, f"score {view.score}"))
            if view.game_over or view.victory:
                break
        return Checkpoints(
            story_md5=session.story_md5,
            seed=seed,
            walkthrough_steps=len(commands),
            steps_played=played,
            checkpoints=tuple(found),
            seconds=round(time.perf_counter() - started, 3),
        )
    finally:
        session.close()


_DERIVED: dict[str, Checkpoints] = {}
"""Checkpoints derived in this process, by story md5: a batch worker or a run of many episodes plays the
walkthrough once per game. Deriving takes 0.1-1.2 s on the corpus (spirit's 1,264 steps the longest), so
nothing is kept on disk."""


def checkpoints_for(session: JerichoSession) -> Checkpoints:
    """The checkpoints of `session`'s story file, derived once per process on an emulator of their own (the
    session's game is never touched), under the walkthrough's own seed whatever seed the episode plays under: the
    walkthrough wins only under its seed (under seed 1, planetfall's dies before it reaches a room), and the marks,
    room ids and scores, are facts of the game that every seed's episode is measured against alike."""
    if session.story_md5 not in _DERIVED:
        _DERIVED[session.story_md5] = derive(session.story_file, None, session.time_limit)
    return _DERIVED[session.story_md5]
