"""Objectives (design 001's data model, docs/design.md), discovered from game state (offline) or proposed by the
LLM critic (llm mode).

A completion only counts when it is verified against the game: the exit was walked (the room id changed), the item
is now held, or, for an LLM objective, the critic quotes evidence that is in the game's response to the turn it
judges. An objective, once completed, is never discovered again, so walking in circles or taking and dropping the
same item cannot reset the stuck timer.

In llm mode no call of its own is made: the critic reviews the objectives in the verdict it gives anyway, on the
turns `wants_review` picks (the last turn changed the world, or discovery is due). This manager never talks to an
LLM; it reads the review (session.context.ObjectiveReview).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loguru import logger

from managers.map_graph import MapGraph
from session.commands import TAKE_VERBS, direction_of
from session.config import LoopBreakConfig
from session.context import ObjectiveReview
from session.events import EventType
from session.outcomes import DARK_PHRASES
from session.records import GameView, TurnRecord

MIN_EVIDENCE_CHARS = 8


@dataclass
class Objective:
    text: str
    kind: str
    """`explore_exit`, `hold_item` (verified from game state) or `llm` (verified by evidence on a novel turn)."""
    target: Any
    discovered_turn: int


class ObjectiveManager:
    def __init__(self, config: LoopBreakConfig, mode: str = "state"):
        self.config = config
        self.mode = mode
        self._discovered: dict[str, Objective] = {}
        self.completed_objectives: list[dict[str, Any]] = []
        self._completed_keys: set[str] = set()
        self._stale_keys: set[str] = set()
        """Objectives dropped as stale: not rediscovered until progress happens again."""
        self._last_progress_turn = 0

    @property
    def discovered_objectives(self) -> list[str]:
        return [objective.text for objective in self._discovered.values()]

    def current(self) -> tuple[str, ...]:
        return tuple(self.discovered_objectives)

    def completed(self) -> tuple[str, ...]:
        return tuple(entry["objective"] for entry in self.completed_objectives)

    # -- discovery ---------------------------------------------------------------------------------------
    def discover(self, turn: int, view: GameView, game_map: MapGraph, visible: tuple[str, ...] | None = None) -> None:
        """state mode: objectives read off the game state (untried exits here, objects here), naming only what a
        player knows: no room in the dark, and only the objects in `visible` (those the game's text has named
        here; None: every object in the room)."""
        if self.mode == "llm":
            return
        if not any(phrase in view.text.lower() for phrase in DARK_PHRASES):
            for direction in game_map.untried_directions(view.room_id)[:2]:
                self._add(f"Explore {direction} from {view.room_name}", "explore_exit", (view.room_id, direction), turn)
        held = {obj.name for obj in view.inventory}
        shown = [o for o in view.room_objects if o.name not in held and (visible is None or o.name in visible)]
        for obj in shown[:2]:
            self._add(f"Take the {obj.name}", "hold_item", obj.name, turn)

    def wants_review(self, turn: int, last: TurnRecord | None) -> bool:
        """llm mode: ask the critic to review the objectives this turn? When discovery is due (the first turn and
        every `objective_update_interval`-th), or when the last turn changed the world in a way that could complete
        an open objective. It costs no call: the review rides on the critic's verdict."""
        if self.mode != "llm":
            return False
        due = turn == 1 or turn % self.config.objective_update_interval == 0
        changed = last is not None and bool(
            last.new_world_state
            or last.score_changed
            or last.new_room
            or set(last.inventory_after) != set(last.inventory_before)
        )
        return due or (changed and bool(self._discovered))

    def _add(self, text: str, kind: str, target: Any, turn: int) -> bool:
        key = _key(kind, target, text)
        if key in self._discovered or key in self._completed_keys or key in self._stale_keys:
            return False
        self._discovered[key] = Objective(text, kind, target, turn)
        while len(self._discovered) > self.config.max_objectives:
            self._discovered.pop(next(iter(self._discovered)))
        return True

    # -- completion --------------------------------------------------------------------------------------
    def observe(self, record: TurnRecord) -> list[dict[str, Any]]:
        """Verify game-state completions for this turn; returns the new completion records (also kept in the list)."""
        completed: list[Objective] = []
        direction = direction_of(record.command)
        for key, objective in list(self._discovered.items()):
            if objective.kind == "explore_exit" and objective.target == (record.room_id_before, direction):
                if record.moved:
                    completed.append(objective)
                else:
                    self._discovered.pop(key)  # that exit does not exist: not progress, just gone
            elif objective.kind == "hold_item":
                if objective.target in record.inventory_after and objective.target not in record.inventory_before:
                    completed.append(objective)
                elif _verb_targets(record.command, objective.target):
                    self._discovered.pop(key)  # a take that failed: it cannot be taken (now), drop it
        return [self._complete(objective, record) for objective in completed]

    def reached(
        self, record: TurnRecord, review: ObjectiveReview | None, judged: TurnRecord | None
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """A live turn's objectives: those it completed (read off the game state, and by the critic's `review` of
        `judged`, the turn before, when it gave one) and those the review added."""
        completed, added = self.observe(record), []
        if review is not None:
            reviewed, added = self.review(record.turn, review, judged)
            completed += reviewed
        return completed, added

    def review(self, turn: int, review: ObjectiveReview, judged: TurnRecord | None) -> tuple[list[dict], list[str]]:
        """llm mode: the critic's review, read on `turn`. A completion counts only when `judged` (the turn the critic
        saw last) changed the world in a way never seen before and the evidence is quoted from its response; new
        objectives are added. Returns (completion records, objectives added)."""
        completed: list[dict] = []
        # Only a turn that changed the world in a way never seen can complete anything: claims made while walking
        # in circles would otherwise reset the stuck timer.
        if judged is not None and (judged.new_world_state or judged.score_changed or judged.new_room):
            response = " ".join(judged.response.lower().split())
            for claimed, quoted in review.completed:
                objective = self._discovered.get(_key("llm", None, claimed))
                evidence = " ".join(quoted.lower().split())
                if objective is not None and len(evidence) >= MIN_EVIDENCE_CHARS and evidence in response:
                    completed.append(self._complete(objective, judged))
                else:
                    logger.bind(event_type=EventType.OBJECTIVE_CLAIM_REJECTED).info(
                        f"unverified objective claim: {claimed!r} (evidence {quoted!r})"
                    )
        added = [text for text in review.proposed if self._add(text, "llm", None, turn)]
        return completed, added

    def restore(self, record: TurnRecord) -> None:
        """Resume: bring the objectives to their state after a recorded turn, without asking any LLM: game-state
        objectives are verified again from the record (discovery was replayed before it); an LLM's completions and
        additions are taken from the record as written."""
        if self.mode != "llm":
            self.observe(record)
            return
        for entry in record.objectives_completed:
            key = _key("llm", None, str(entry.get("objective", "")))
            self._discovered.pop(key, None)
            self._completed_keys.add(key)
            self.completed_objectives.append(entry)
        for text in record.objectives_added:
            self._add(text, "llm", None, record.turn)

    def _complete(self, objective: Objective, record: TurnRecord) -> dict[str, Any]:
        key = _key(objective.kind, objective.target, objective.text)
        self._discovered.pop(key, None)
        self._completed_keys.add(key)
        entry = {
            "objective": objective.text,
            "completed_turn": record.turn,
            "completion_action": record.command,
            "completion_response": record.response.strip()[:500],
            "completion_location": record.room_name_after,
            "completion_score": record.score_after,
        }
        self.completed_objectives.append(entry)
        return entry

    # -- staleness ---------------------------------------------------------------------------------------
    def prune(self, turn: int, last_progress_turn: int) -> None:
        """Drop discovered objectives that saw no progress for `objective_staleness_turns` turns.

        A dropped objective is not rediscovered until progress happens again.
        """
        if last_progress_turn > self._last_progress_turn:
            self._last_progress_turn = last_progress_turn
            self._stale_keys.clear()
        limit = self.config.objective_staleness_turns
        for key, objective in list(self._discovered.items()):
            if turn - max(objective.discovered_turn, last_progress_turn) >= limit:
                self._discovered.pop(key)
                self._stale_keys.add(key)


def _key(kind: str, target: Any, text: str) -> str:
    """Game-state objectives are identified by their target (a room id and direction, an item), so two rooms
    that share a name keep separate objectives; LLM objectives by their text."""
    return f"{kind}:{target}" if kind != "llm" else "llm:" + " ".join(text.lower().split())


def _verb_targets(command: str, item_name: str) -> bool:
    words = command.lower().split()
    noun = item_name.lower().replace("-", " ").split()[-1] if item_name.strip() else ""
    return bool(words) and words[0] in TAKE_VERBS and noun in words
