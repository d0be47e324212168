"""Objectives (seed 001 data model), discovered from game state (offline) or by the LLM (llm mode).

A completion only counts when it is verified against the game: the exit was walked (the room id changed), the item
is now held, or, for an LLM objective, the LLM cites evidence that is in the game's response on a turn that changed
the world in a way never seen before. An objective, once completed, is never discovered again, so walking in circles
or taking and dropping the same item cannot reset the stuck timer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loguru import logger

from agents.base import LLMCallFailed
from agents.llm_client import LLMClient
from agents.reply import json_object
from managers.map_graph import MapGraph
from session.commands import direction_of
from session.config import LLMConfig, LoopBreakConfig
from session.records import GameView, TurnRecord

MIN_EVIDENCE_CHARS = 8

DISCOVERY_PROMPT = (
    "You track objectives for an agent playing Zork I. From the state below, list up to 5 short, concrete "
    'objectives worth pursuing next. Reply with JSON only: {"objectives": ["...", "..."]}.'
)
COMPLETION_PROMPT = (
    "You check whether the last game turn completed any of the listed objectives. Only claim a completion that the "
    "game's response proves; quote the proving words exactly. Reply with JSON only: "
    '{"completed": [{"objective": "<objective text>", "evidence": "<exact quote from the response>"}]}.'
)


@dataclass
class Objective:
    text: str
    kind: str
    """`explore_exit`, `hold_item` (verified from game state) or `llm` (verified by evidence on a novel turn)."""
    target: Any
    discovered_turn: int


class ObjectiveManager:
    def __init__(
        self,
        config: LoopBreakConfig,
        mode: str = "state",
        client: LLMClient | None = None,
        llm_config: LLMConfig | None = None,
    ):
        if mode == "llm" and (client is None or llm_config is None):
            raise ValueError("llm objectives need an LLM client and its config")
        self.config = config
        self.mode = mode
        self.client = client
        self.llm_config = llm_config
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

    # -- discovery ---------------------------------------------------------------------------------------
    def discover(self, turn: int, view: GameView, game_map: MapGraph, state_text: str = "") -> None:
        if self.mode == "llm":
            if turn == 1 or turn % self.config.objective_update_interval == 0:
                self._discover_with_llm(turn, state_text)
            return
        for direction in game_map.untried_directions(view.room_id)[:2]:
            self._add(f"Explore {direction} from {view.room_name}", "explore_exit", (view.room_id, direction), turn)
        held = {obj.name for obj in view.inventory}
        for obj in [o for o in view.room_objects if o.name not in held][:2]:
            self._add(f"Take the {obj.name}", "hold_item", obj.name, turn)

    def _add(self, text: str, kind: str, target: Any, turn: int) -> None:
        key = _key(kind, target, text)
        if key in self._discovered or key in self._completed_keys or key in self._stale_keys:
            return
        self._discovered[key] = Objective(text, kind, target, turn)
        while len(self._discovered) > self.config.max_objectives:
            self._discovered.pop(next(iter(self._discovered)))

    def _discover_with_llm(self, turn: int, state_text: str) -> None:
        data = self._ask(DISCOVERY_PROMPT, state_text)
        items = data.get("objectives", []) if isinstance(data, dict) else []
        for item in items[:5] if isinstance(items, list) else []:
            if isinstance(item, str) and 3 <= len(item.strip()) <= 160:
                self._add(item.strip(), "llm", None, turn)

    def _ask(self, system: str, user: str) -> Any:
        assert self.client is not None and self.llm_config is not None
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        try:
            reply = self.client.chat(
                "objectives", self.llm_config.objectives_model, messages,
                self.llm_config.critic_temperature, self.llm_config.critic_max_tokens,
            )  # fmt: skip
        except LLMCallFailed as exc:
            logger.warning(f"objective call skipped: {exc}")
            return {}
        return json_object(reply) or {}

    # -- completion --------------------------------------------------------------------------------------
    def observe(self, record: TurnRecord) -> list[dict[str, Any]]:
        """Verify completions for this turn; returns the new completion records (also kept in the list)."""
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
        novel = record.new_world_state or record.score_changed or record.new_room
        if self.mode == "llm" and novel and any(o.kind == "llm" for o in self._discovered.values()):
            completed += self._llm_completions(record)
        return [self._complete(objective, record) for objective in completed]

    def restore(self, record: TurnRecord) -> None:
        """Resume: bring the objectives to their state after a recorded turn, without asking any LLM.

        Game-state objectives are verified again from the record (discovery was replayed before it); an LLM's
        completions are taken from the record as written, and its open objectives come back at the next
        discovery interval."""
        if self.mode != "llm":
            self.observe(record)
            return
        for entry in record.objectives_completed:
            key = _key("llm", None, str(entry.get("objective", "")))
            self._discovered.pop(key, None)
            self._completed_keys.add(key)
            self.completed_objectives.append(entry)

    def _llm_completions(self, record: TurnRecord) -> list[Objective]:
        listed = "\n".join(f"- {o.text}" for o in self._discovered.values() if o.kind == "llm")
        user = f"Objectives:\n{listed}\n\nCommand: {record.command}\nGame response:\n{record.response}"
        data = self._ask(COMPLETION_PROMPT, user)
        claims = data.get("completed", []) if isinstance(data, dict) else []
        response = " ".join(record.response.lower().split())
        verified = []
        for claim in claims if isinstance(claims, list) else []:
            claimed, quoted = _claim_texts(claim)
            if claimed is None:
                continue
            objective = self._discovered.get(_key("llm", None, claimed))
            evidence = " ".join(quoted.lower().split())
            if objective in verified:
                continue  # the same objective claimed twice completes once
            if objective and len(evidence) >= MIN_EVIDENCE_CHARS and evidence in response:
                verified.append(objective)
            else:
                logger.bind(event_type="objective_claim_rejected").info(
                    f"unverified objective claim: {claimed[:160]!r} (evidence {quoted[:160]!r})"
                )
        return verified

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


def _claim_texts(claim: Any) -> tuple[str | None, str]:
    """(objective, evidence) of one completion claim; (None, "") unless the claim is an object of strings.

    Any other JSON value is refused rather than rendered: a nested list could be deep enough to break `str()`."""
    if not isinstance(claim, dict):
        return None, ""
    claimed, quoted = claim.get("objective", ""), claim.get("evidence", "")
    return (claimed, quoted) if isinstance(claimed, str) and isinstance(quoted, str) else (None, "")


def _key(kind: str, target: Any, text: str) -> str:
    """Game-state objectives are identified by their target (a room id and direction, an item), so two rooms
    that share a name keep separate objectives; LLM objectives by their text."""
    return f"{kind}:{target}" if kind != "llm" else "llm:" + " ".join(text.lower().split())


def _verb_targets(command: str, item_name: str) -> bool:
    words = command.lower().split()
    noun = item_name.lower().replace("-", " ").split()[-1] if item_name.strip() else ""
    return bool(words) and words[0] in ("take", "get", "pick", "grab") and noun in words
