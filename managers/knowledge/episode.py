"""One episode's knowledge: the store it began with, what it learns from its records, what it is shown each turn.

`Knowledge` learns one record per turn (`Learning`), guides each turn (`Guide`) and merges what it learned into the
store at the episode's end (also when the episode crashes: the orchestrator calls `save` from its `finally`).
"""

from __future__ import annotations

from pathlib import Path

from managers.knowledge.guidance import Guide
from managers.knowledge.learning import Learning
from managers.knowledge.store import KnowledgeStore, write_store
from session.context import Guidance
from session.records import GameView, TurnRecord


class Knowledge:
    """One episode's view of the store: learns from its records, guides its turns, saves at its end."""

    def __init__(self, store: KnowledgeStore, path: Path | None):
        self.store = store
        self.path = path
        """Where `save` writes; None: learn and guide, never write (a store shared read-only)."""
        self.learning = Learning(store)
        self.guide = Guide(store, self.learning)

    # -- learning, one record per turn -------------------------------------------------------------------
    def observe(self, record: TurnRecord, episode: str) -> None:
        self.learning.observe(record, episode)

    def note_loop(self, turns: list[TurnRecord], reason: str, episode: str) -> None:
        self.learning.note_loop(turns, reason, episode)

    def valuables(self) -> set[str]:
        return self.learning.valuables()

    # -- guiding a turn ------------------------------------------------------------------------------------
    def guidance(self, view: GameView) -> Guidance:
        return self.guide.guidance(view)

    def avoid(self, room_id: int | None) -> tuple[str, ...]:
        return self.guide.avoid(room_id)

    def route_next(self, view: GameView) -> str:
        return self.guide.route_next(view)

    def route_then(self, next_step: str) -> tuple[str, ...]:
        return self.guide.route_then(next_step)

    def rerolls_due(self) -> int:
        return self.guide.rerolls_due()

    def earlier_lines(self) -> tuple[str, ...]:
        return self.guide.earlier_lines()

    # -- the end of an episode -----------------------------------------------------------------------------
    def episode_facts(self) -> list[str]:
        return self.learning.episode_facts()

    def add_notes(self, notes: list[tuple[str, int]], episode: str) -> int:
        return self.learning.add_notes(notes, episode)

    def merge(self, summary: dict) -> KnowledgeStore:
        return self.learning.merge(summary)

    def save(self, summary: dict) -> Path | None:
        """Merge this episode and write the store (when it has a path); the path written."""
        store = self.merge(summary)
        if self.path is None:
            return None
        write_store(store, self.path)
        return self.path
