"""A turn's record, built once and whole from what the turn did."""

from __future__ import annotations

from dataclasses import replace

from managers.novelty import Novelty
from orchestration.choosing import Choice
from orchestration.spending import Usage
from session.records import NOT_RUN, Candidate, GameView, Judgement, TurnRecord


def turn_record(
    turn: int,
    agent_kind: str,
    forced: bool,
    views: tuple[GameView, GameView],
    choice: Choice,
    outcome: tuple[str, Novelty],
    events: list[dict],
    usage: Usage,
    wall_seconds: float,
    branch: int,
    agent_memory: dict | None,
) -> TurnRecord:
    """The turn's record, whole: the views before and after the command, the choice, what it reached, what the
    turn's LLM calls spent, and the agent's memory when it changed."""
    view, after = views
    category, novelty = outcome
    chosen, fallback = choice.chosen, choice.fallback
    if choice.refusal is not None:
        fallback = fallback or NOT_RUN
    before_room = after.came_from if view.room_id is None and after.came_from else (view.room_id, view.room_name)
    if chosen is not None and fallback in (None, NOT_RUN):
        judgement = chosen.judgement
    else:  # nothing ran in place of a proposal: nothing was judged
        judgement = Judgement(1.0, f"fallback ({fallback})", source="fallback")
    ran = chosen is not None and not fallback
    calls, tokens, cost = usage
    return TurnRecord(
        turn=turn,
        command=choice.command,
        agent_kind=agent_kind,
        forced=forced,
        room_id_before=before_room[0],
        room_name_before=before_room[1],
        room_id_after=after.room_id,
        room_name_after=after.room_name,
        score_before=view.score,
        score_after=after.score,
        world_hash_before=view.world_hash,
        world_hash_after=after.world_hash,
        inventory_before=tuple(o.name for o in view.inventory),
        inventory_after=tuple(o.name for o in after.inventory),
        response=after.text,
        critic_base_score=judgement.base,
        critic_reason=judgement.reason,
        critic_adjusted_score=judgement.score,
        adjustments=judgement.adjustments,
        would_reject=bool(forced and chosen and not chosen.accepted),
        rejections=sum(1 for c in choice.candidates if not c.accepted) if not forced else 0,
        candidates=[_candidate_record(c) for c in choice.candidates],
        llm_calls=calls,
        llm_tokens=tokens,
        llm_cost_usd=cost,
        wall_seconds=wall_seconds,
        game_over=after.game_over,
        victory=after.victory,
        new_room="new_room" in novelty.kinds,
        new_world_state="new_world_state" in novelty.kinds,
        novelty=novelty.kinds,
        situation=novelty.situation,
        held=novelty.held,
        rolled_dice=after.rolled_dice,
        result_category=category,
        fallback=fallback,
        ran=choice.refusal is None,
        parse_failures=list(choice.parse_failures),
        thought=chosen.thought if ran else "",
        note=chosen.note if ran else "",
        events=events,
        branch=branch,
        agent_memory=agent_memory,
    )


def with_objectives(draft: TurnRecord, completed: list[dict], added: list[str]) -> TurnRecord:
    """The turn's record with the objectives it reached and added; the draft itself when there are none, as on most
    turns (a frozen record remade costs about 15 µs)."""
    if not (completed or added):
        return draft
    return replace(draft, objectives_completed=completed, objectives_added=added)


def _candidate_record(candidate: Candidate) -> dict:
    judgement = candidate.judgement
    return {
        "command": candidate.command,
        "score": judgement.score,
        "base_score": judgement.base,
        "reason": judgement.reason,
        "source": judgement.source,
        "accepted": candidate.accepted,
        "thought": candidate.thought,
        "note": candidate.note,
    }
