"""Shared test factories: synthetic records with neutral defaults, so a test names only what it cares about, and the
loop break they are fed to."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from managers.loop_break import DestinationPredictor, LoopBreak
from managers.loop_break.room_loops import CampingResult, Detections, OscillationResult, RegionLoopResult
from managers.map_graph import MapGraph
from session.config import LoopBreakConfig, stop_rules_off
from session.records import TurnRecord

SEED_LOOP_BREAK = {
    **stop_rules_off(),
    "no_progress": {"max_turns": 40},
    "warning_lead_turns": 20,
    "progress_signals": ["score", "objective", "new_room"],
    "repetition": {"enabled": False},
    "wait_allowance": 0,
    "steering_pressure": 0.0,
}
"""`[tool.zorkgpt.loop_break]` as designs 000 and 001 specify it (docs/design.md), not the corpus-measured defaults: the
no-progress rule alone stops (every other stop rule off, as its section says: session.config.stop_rules_off), no
repetition window, no free waits, penalties and warnings from penalty_min_turns_stuck on. The tests of the designs'
behaviour run under it, so both the designs' behaviour and its flags stay covered."""


def seed_loop_break(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """SEED_LOOP_BREAK with `overrides` merged in: a detector's section key by key (`{"churn": {"window": 12}}` keeps
    the design's `churn.changes = 0`), any other key replaced."""
    merged = {key: dict(value) if isinstance(value, dict) else value for key, value in SEED_LOOP_BREAK.items()}
    for key, value in (overrides or {}).items():
        merged[key] = {**merged.get(key, {}), **value} if isinstance(value, dict) else value
    return merged


def turn_record(turn: int, **fields: Any) -> TurnRecord:
    """A TurnRecord for `turn`: a quiet "wait" in an unknown room that changes nothing; `fields` override any field.

    `score_after` and `inventory_after` left out (or None) stay as `score_before` and `inventory_before`: the turn
    changed neither unless told. Mutable defaults (candidates, llm_calls, llm_tokens) are fresh for every call.
    """
    defaults: dict[str, Any] = {
        "command": "wait",
        "agent_kind": "test",
        "forced": False,
        "room_id_before": None,
        "room_name_before": "",
        "room_id_after": None,
        "room_name_after": "",
        "score_before": 0,
        "score_after": None,
        "world_hash_before": "hash",
        "world_hash_after": "hash",
        "inventory_before": (),
        "inventory_after": None,
        "response": "",
        "critic_base_score": 1.0,
        "critic_reason": "",
        "critic_adjusted_score": 1.0,
        "adjustments": (),
        "would_reject": False,
        "rejections": 0,
        "candidates": [],
        "llm_calls": {},
        "llm_tokens": {},
        "wall_seconds": 0.0,
    }
    record = {**defaults, **fields}
    for after, before in (("score_after", "score_before"), ("inventory_after", "inventory_before")):
        if record[after] is None:
            record[after] = record[before]
    return TurnRecord(turn=turn, **record)


def first_stop(breaker: Any, records: Iterable[TurnRecord]) -> tuple[int | None, str | None]:
    """Feed records to a LoopBreak until it stops the episode: the turn and rule of the stop, or (None, None)."""
    for record in records:
        verdict = breaker.observe(record)
        if verdict.terminate:
            [event] = [e for e in verdict.events if e["event_type"] == "stuck_termination"]
            return record.turn, event["rule"]
    return None, None


def loop_break(**config: Any) -> LoopBreak:
    """A LoopBreak under `config` (`[tool.zorkgpt.loop_break]` keys over the defaults) on an empty map, predicting
    destinations from that map."""
    game_map = MapGraph()
    return LoopBreak(LoopBreakConfig(**config), game_map, DestinationPredictor("map", game_map))


def detections_of(**results: Any) -> Detections:
    """The room-loop detections a penalty is computed from: the `oscillation`, `camping`, `region` and `recent_rooms`
    given, none for the rest."""
    return Detections(
        results.get("oscillation", OscillationResult(False)),
        results.get("camping", CampingResult(False)),
        results.get("region", RegionLoopResult(False)),
        results.get("recent_rooms", ()),
    )
