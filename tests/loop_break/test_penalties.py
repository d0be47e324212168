"""Programmatic penalties and bonuses (`apply_loop_penalties`, `LoopBreak.adjust`) beyond the design's four cases."""

from __future__ import annotations

import pytest

from managers.loop_break import DestinationPredictor, LoopBreak
from managers.loop_break.penalties import adjust_score, why_rejected
from managers.loop_break.room_loops import (
    CampingResult,
    OscillationResult,
    RegionLoopResult,
    apply_loop_penalties,
    room_loop_lines,
)
from managers.map_graph import MapGraph, Room
from session.config import LoopBreakConfig
from session.records import GameView, Judgement, TurnRecord
from tests.factories import SEED_LOOP_BREAK, detections_of, seed_loop_break, turn_record
from tests.helpers import raised

NAMES = {1: "Kitchen", 2: "Living Room", 3: "Attic", 4: "Behind House", 5: "Clearing"}


def name_of(room_id):
    return NAMES.get(room_id, f"Location_{room_id}")


def make_record(turn: int, room_after: int, *, room_before: int | None = None, score_after: int = 0) -> TurnRecord:
    room_before = room_after if room_before is None else room_before
    return turn_record(
        turn,
        room_id_before=room_before,
        room_name_before=name_of(room_before),
        room_id_after=room_after,
        room_name_after=name_of(room_after),
        score_after=score_after,
    )


def view_at(room_id: int) -> GameView:
    return GameView(room_id, name_of(room_id), 0, 0, (), (), f"hash-{room_id}", "")


def house_map() -> MapGraph:
    game_map = MapGraph()
    game_map.rooms[1] = Room(1, "Kitchen", exits={"west": 2, "up": 3, "east": 4})
    game_map.rooms[2] = Room(2, "Living Room", exits={"east": 1})
    game_map.rooms[3] = Room(3, "Attic", exits={"down": 1})
    game_map.rooms[4] = Room(4, "Behind House", exits={"west": 1, "north": 5})
    game_map.rooms[5] = Room(5, "Clearing", exits={"south": 4})
    return game_map


CAMPING = CampingResult(True, 1, "Kitchen", 6, 10)
REGION = RegionLoopResult(True, (1, 2, 3), ("Kitchen", "Living Room", "Attic"), 20, (8, 6, 6))


def test_camping_penalty_only_for_the_camped_room():
    config = LoopBreakConfig()
    judgement = Judgement(0.9, "ok")
    adjusted = apply_loop_penalties(judgement, 1, detections_of(camping=CAMPING), config.room_loops, name_of)
    assert adjusted.score == pytest.approx(0.3)
    assert adjusted.adjustments == ("Camping penalty (returning to Kitchen) -0.60",)
    assert apply_loop_penalties(judgement, 2, detections_of(camping=CAMPING), config.room_loops, name_of) is judgement


def test_region_penalty_only_inside_the_region():
    config = LoopBreakConfig()
    judgement = Judgement(0.8, "ok")
    adjusted = apply_loop_penalties(judgement, 3, detections_of(region=REGION), config.room_loops, name_of)
    assert adjusted.score == pytest.approx(0.2)
    assert "Region-loop penalty" in adjusted.adjustments[0] and "Kitchen, Living Room, Attic" in adjusted.adjustments[0]
    assert apply_loop_penalties(judgement, 5, detections_of(region=REGION), config.room_loops, name_of) is judgement


def test_revisit_penalty_is_exact_at_threshold():
    """0.7 - 0.2 is 0.5 (accepted at threshold 0.5), not 0.49999999999999994."""
    config = LoopBreakConfig()
    adjusted = apply_loop_penalties(
        Judgement(0.7, "ok"), 2, detections_of(recent_rooms=(1, 2)), config.room_loops, name_of
    )
    assert adjusted.score == 0.5
    assert adjusted.adjustments == ("Revisit penalty (Living Room visited recently) -0.20",)


def test_all_adjustments_stack_and_are_listed():
    config = LoopBreakConfig()
    everything = detections_of(
        oscillation=OscillationResult(True, (1, 2), ("Kitchen", "Living Room")),
        camping=CAMPING,
        region=REGION,
        recent_rooms=(1, 2),
    )
    adjusted = apply_loop_penalties(Judgement(1.0, "ok"), 1, everything, config.room_loops, name_of)
    assert adjusted.score == 0.0  # 1.0 - 0.8 - 0.6 - 0.6 - 0.2, clamped
    assert [a.split(" (")[0] for a in adjusted.adjustments] == [
        "Oscillation penalty",
        "Camping penalty",
        "Region-loop penalty",
        "Revisit penalty",
    ]
    # Leaving every loop for a new room: only the exploration bonus.
    leaving = apply_loop_penalties(Judgement(0.3, "ok"), 5, everything, config.room_loops, name_of)
    assert leaving.score == pytest.approx(0.8) and len(leaving.adjustments) == 1


def test_configured_amounts_are_used_and_zero_is_no_adjustment():
    config = LoopBreakConfig(room_loops={"oscillation_return_penalty": -0.3, "oscillation_exploration_bonus": 0.0})
    oscillation = detections_of(oscillation=OscillationResult(True, (1, 2), ("Kitchen", "Living Room")))
    assert apply_loop_penalties(
        Judgement(0.9, "ok"), 2, oscillation, config.room_loops, name_of
    ).score == pytest.approx(0.6)
    judgement = Judgement(0.6, "ok")
    assert (
        apply_loop_penalties(judgement, 5, oscillation, config.room_loops, name_of) is judgement
    )  # bonus 0: unchanged


def test_base_score_survives_a_second_adjustment():
    config = LoopBreakConfig()
    first = apply_loop_penalties(Judgement(0.9, "ok"), 1, detections_of(camping=CAMPING), config.room_loops, name_of)
    second = apply_loop_penalties(first, 1, detections_of(recent_rooms=(1,)), config.room_loops, name_of)
    assert second.base_score == 0.9 and second.score == pytest.approx(0.1)
    assert len(second.adjustments) == 2


def test_camping_penalty_through_loop_break():
    game_map = house_map()
    loop_break = LoopBreak(
        LoopBreakConfig(**seed_loop_break({"room_loops": {"enable_location_penalty": False}})),
        game_map,
        DestinationPredictor("map", game_map),
    )
    # Kitchen six times in ten turns, with excursions to different rooms (no A-B-A-B, window too short for a region).
    rooms = [1, 2, 1, 3, 1, 4, 1, 5, 1, 1]
    for turn, room in enumerate(rooms, start=1):
        loop_break.observe(make_record(turn, room))
    assert (
        loop_break.detectors["room_loops"].active.camping.detected
        and loop_break.detectors["room_loops"].active.camping.camped_location_id == 1
    )
    assert (
        not loop_break.detectors["room_loops"].active.oscillation.detected
        and not loop_break.detectors["room_loops"].active.region.detected
    )
    events: list[dict] = []
    back = raised(events, loop_break.adjust("south", Judgement(0.8, "ok"), view_at(5), turn=11)).judgement
    assert back.score == pytest.approx(0.8)  # south from the Clearing is Behind House, not the Kitchen
    forth = raised(events, loop_break.adjust("west", Judgement(0.8, "ok"), view_at(4), turn=11)).judgement
    assert forth.score == pytest.approx(0.2)
    assert [e["event_type"] for e in events] == ["loop_penalty_applied"]
    assert events[0]["destination"] == 1 and events[0]["turned_to_reject"] is True
    line = "You have spent 6 of the last 10 turns in Kitchen, repeating what you did before."
    assert line in room_loop_lines(loop_break.detectors["room_loops"].active)
    # Shown to the agent only while it repeats itself: these ten turns each went somewhere new.
    assert line not in loop_break.status(11, view_at(1), ()).loop_info


def test_adjust_without_active_detections_is_a_no_op():
    game_map = house_map()
    loop_break = LoopBreak(LoopBreakConfig(**SEED_LOOP_BREAK), game_map, DestinationPredictor("map", game_map))
    judgement = Judgement(0.9, "ok")
    assert loop_break.adjust("west", judgement, view_at(1), turn=1).judgement is judgement  # nothing observed yet
    loop_break.observe(make_record(1, 1))
    loop_break.observe(make_record(2, 2, room_before=1))
    # turns_stuck 2 < penalty_min_turns_stuck 4: even the revisit penalty waits.
    assert loop_break.detectors["room_loops"].active.recent_rooms == ()
    assert loop_break.adjust("east", judgement, view_at(2), turn=3).judgement is judgement


def test_the_way_out_of_a_loop_is_not_walled_in_by_the_loops_penalties():
    """The shortest way out of an A-B loop runs through the loop's own rooms: the step gets the way-out bonus and
    none of the room-loop penalties, which would otherwise outweigh it and keep the agent inside."""
    game_map = house_map()
    config = LoopBreakConfig()
    loop_break = LoopBreak(config, game_map, DestinationPredictor("map", game_map))
    for turn in range(1, config.repetition.window + 1):  # Living Room <-> Kitchen, a whole window of turns
        here, there, command = (2, 1, "east") if turn % 2 else (1, 2, "west")
        loop_break.observe(
            turn_record(
                turn,
                command=command,
                room_id_before=here,
                room_name_before=name_of(here),
                room_id_after=there,
                room_name_after=name_of(there),
            )
        )
    assert loop_break.detectors["room_loops"].active.oscillation.detected
    # From the Living Room the only way anywhere is east, through the Kitchen, to Behind House and beyond.
    turn = config.repetition.window + 1
    way_out = loop_break.adjust("east", Judgement(0.6, "ok"), view_at(2), turn=turn).judgement
    assert way_out.score == pytest.approx(1.0)
    assert [a.split(" (")[0] for a in way_out.adjustments] == ["Way-out bonus"]
    # Back into the loop from the Kitchen is still penalised.
    back = loop_break.adjust("west", Judgement(0.6, "ok"), view_at(1), turn=turn).judgement
    assert back.score < 0.5 and any("Oscillation penalty" in a for a in back.adjustments)


def test_no_way_out_known_gives_no_bonus_to_anything():
    """Every room the map knows is in the loop: there is no way out to reward, and a command that is no move never
    gets the bonus."""
    game_map = MapGraph()
    game_map.rooms[1] = Room(1, "Kitchen", exits={"west": 2})
    game_map.rooms[2] = Room(2, "Living Room", exits={"east": 1})
    loop_break = LoopBreak(LoopBreakConfig(), game_map, DestinationPredictor("map", game_map))
    for turn in range(1, 13):
        here, there, command = (2, 1, "east") if turn % 2 else (1, 2, "west")
        loop_break.observe(
            turn_record(
                turn,
                command=command,
                room_id_before=here,
                room_name_before=name_of(here),
                room_id_after=there,
                room_name_after=name_of(there),
            )
        )
    judged = loop_break.adjust("examine door", Judgement(0.6, "ok"), view_at(2), turn=13).judgement
    assert not any("Way-out" in a for a in judged.adjustments)


def test_the_agent_is_told_why_in_plain_words():
    """The records keep the penalties; the agent reads what they mean, never the raw "s: a plausible next step [Loop
    Detection Override: Revisit penalty ... -0.20; Repeat penalty ... -0.50]"."""
    judged = adjust_score(
        Judgement(0.8, "a plausible next step"),
        [
            (-0.2, "Revisit penalty (Kitchen visited recently)"),
            (-0.5, "Repeat penalty (this move was already made from here since the last progress)"),
        ],
    )
    assert "Loop Detection Override" in judged.reason and judged.score == pytest.approx(0.1)
    told = why_rejected(judged, 0.5)
    assert told == (
        "the harness turned it down: you were there a few turns ago; you already made this move from here since "
        "your last progress"
    )
    assert "penalty" not in told and "Override" not in told and "-0." not in told
    low = adjust_score(Judgement(0.3, "already tried here"), [(-0.2, "Revisit penalty (Kitchen visited recently)")])
    assert why_rejected(low, 0.5) == "already tried here (also: you were there a few turns ago)"
    assert why_rejected(Judgement(0.2, "it is nailed shut"), 0.5) == "it is nailed shut"
