"""Room-loop detectors fed synthetic turn records: the region loop (shuttling among a few known rooms) and the
edge cases of oscillation and camping (unknown locations, windows)."""

from __future__ import annotations

from managers.loop_break import DestinationPredictor, LoopBreak
from managers.loop_break.progress import ProgressTracker
from managers.loop_break.room_loops import CampingCount, OscillationCount, RegionLoopCount, room_loop_lines
from managers.map_graph import MapGraph
from session.config import LoopBreakConfig
from session.records import GameView, Judgement, TurnRecord
from tests.factories import seed_loop_break, turn_record

NAMES = {1: "Kitchen", 2: "Living Room", 3: "Cellar", 4: "Troll Room", 5: "East-West Passage", 6: "Round Room"}
CORRIDOR = [1, 2, 3, 4, 3, 2]  # Kitchen <-> Living Room <-> Cellar <-> Troll Room and back


def make_record(
    turn: int,
    room_after: int | None,
    *,
    room_before: int | None = None,
    score_before: int = 0,
    score_after: int | None = None,
    new_room: bool = False,
    command: str = "go",
) -> TurnRecord:
    room_before = room_after if room_before is None else room_before
    return turn_record(
        turn,
        command=command,
        room_id_before=room_before,
        room_name_before=NAMES.get(room_before, ""),
        room_id_after=room_after,
        room_name_after=NAMES.get(room_after, ""),
        score_before=score_before,
        score_after=score_after,
        new_room=new_room,
    )


def walk(rooms_by_turn, *, signals=("score",), window=20, max_rooms=4, score_at=None, new_room_at=None):
    """Feed the region detector (progress from a real ProgressTracker); returns the detector."""
    detector = RegionLoopCount(window, max_rooms)
    tracker = ProgressTracker(set(signals))
    previous = rooms_by_turn[0]
    for turn, room in enumerate(rooms_by_turn, start=1):
        scored = turn == score_at
        record = make_record(
            turn, room, room_before=previous, score_after=5 if scored else None, new_room=turn == new_room_at
        )
        detector.observe(record, tracker.observe(record))
        previous = room
    return detector


def corridor_walk(turns: int) -> list[int]:
    return [CORRIDOR[i % len(CORRIDOR)] for i in range(turns)]


# -- region loop ---------------------------------------------------------------------------------------------
def test_region_loop_four_room_walk_without_progress_is_detected():
    detector = walk(corridor_walk(20))
    result = detector.detect(NAMES.get)
    assert result.detected
    assert result.room_ids == (1, 2, 3, 4)
    assert result.room_names == ("Kitchen", "Living Room", "Cellar", "Troll Room")
    assert result.window_size == 20
    rooms = corridor_walk(20)
    assert result.visits == tuple(rooms.count(r) for r in (1, 2, 3, 4))
    # The same walk is neither an A-B-A-B oscillation nor camping: only the region detector catches it.
    oscillation, camping = OscillationCount(), CampingCount(10, 5)
    for turn, room in enumerate(rooms, start=1):
        oscillation.observe(make_record(turn, room))
        camping.observe(make_record(turn, room))
    assert not oscillation.detect().detected and not camping.detect().detected


def test_region_loop_needs_a_full_window():
    assert not walk(corridor_walk(19)).detect().detected
    assert walk(corridor_walk(20)).detect().detected


def test_region_loop_not_detected_with_progress_in_window():
    # A score change on turn 10 lies inside the window of turns 1-20 (and of turns 11-30 it does not).
    assert not walk(corridor_walk(20), score_at=10).detect().detected
    assert not walk(corridor_walk(29), score_at=10).detect().detected
    assert walk(corridor_walk(30), score_at=10).detect().detected


def test_region_loop_not_detected_with_new_room_in_window():
    # new_room is not a progress signal here: the detector's own "no new room" rule must hold the detection off.
    rooms = corridor_walk(20)
    assert not walk(rooms, signals=("score",), new_room_at=15).detect().detected
    assert walk(corridor_walk(35), signals=("score",), new_room_at=15).detect().detected


def test_region_loop_more_rooms_than_max_is_not_detected():
    five = [1, 2, 3, 4, 5, 4, 3, 2]
    rooms = [five[i % len(five)] for i in range(24)]
    assert not walk(rooms, max_rooms=4).detect().detected
    assert walk(rooms, max_rooms=5).detect().room_ids == (1, 2, 3, 4, 5)


def test_region_loop_single_room_is_not_a_region_loop():
    assert not walk([3] * 25).detect().detected


def test_region_loop_ignores_unknown_locations():
    rooms = [None if i % 5 == 0 else CORRIDOR[i % len(CORRIDOR)] for i in range(20)]
    result = walk(rooms).detect()
    assert result.detected and None not in result.room_ids


def test_region_loop_through_loop_break_emits_loop_detected_and_penalises():
    game_map = MapGraph()
    for room_id, name in NAMES.items():
        game_map.visit(room_id, name, 0)
    game_map.rooms[2].exits.update({"west": 1, "down": 3})
    game_map.rooms[3].exits.update({"up": 2, "east": 4, "south": 6})
    config = LoopBreakConfig(**seed_loop_break({"room_loops": {"enable_location_penalty": False}}))
    loop_break = LoopBreak(config, game_map, DestinationPredictor("map", game_map))
    rooms = corridor_walk(20)
    previous = rooms[0]
    events = []
    for turn, room in enumerate(rooms, start=1):
        verdict = loop_break.observe(make_record(turn, room, room_before=previous))
        events += [e for e in verdict.events if e["event_type"] == "loop_detected"]
        previous = room
    assert [e["kind"] for e in events] == ["region_loop"] and events[0]["turn"] == 20
    assert loop_break.detectors["room_loops"].active.region.room_ids == (1, 2, 3, 4)
    cellar = GameView(3, "Cellar", 0, 0, (), (), "h", "")
    assert (
        "You keep to Kitchen, Living Room, Cellar, Troll Room without progress"
        in room_loop_lines(loop_break.detectors["room_loops"].active)[0]
    )
    # Staying inside the region is penalised; leaving it (Round Room) is not.
    penalised = loop_break.adjust("up", Judgement(0.9, "ok"), cellar, 21).judgement
    assert penalised.score == 0.3 and "Region-loop penalty" in penalised.adjustments[0]
    out = Judgement(0.9, "ok")
    assert loop_break.adjust("south", out, cellar, 21).judgement is out


# -- oscillation and camping edge cases ----------------------------------------------------------------------
def test_oscillation_ignores_unknown_location():
    detector = OscillationCount()
    for turn, room in enumerate([1, None, 1, None], start=1):
        detector.observe(make_record(turn, room))
    assert not detector.detect().detected


def test_oscillation_only_looks_at_the_last_four_locations():
    detector = OscillationCount()
    for turn, room in enumerate([1, 2, 1, 2, 3], start=1):
        detector.observe(make_record(turn, room))
    assert not detector.detect().detected  # 2-1-2-3
    detector.observe(make_record(6, 2))
    detector.observe(make_record(7, 3))
    assert detector.detect(NAMES.get).pattern_names == ("Living Room", "Cellar")  # 2-3-2-3


def test_camping_default_names_and_below_threshold_window():
    detector = CampingCount(window=10, threshold=5)
    for turn in range(1, 5):
        detector.observe(make_record(turn, 7))
    assert not detector.detect().detected  # four entries: below the threshold
    detector.observe(make_record(5, 7))
    result = detector.detect()
    assert result.detected and result.camped_location_name == "Location_7" and result.window_size == 5


def test_camping_ignores_unknown_locations():
    """A room holding `threshold` of the window's locations is camping even when unknown (None) locations are
    more frequent: None is never a room, so it must not hide the camped room."""
    detector = CampingCount(window=10, threshold=3)
    for turn, room in enumerate([None, None, None, None, None, None, 4, 4, 4, 5], start=1):
        detector.observe(make_record(turn, room))
    result = detector.detect(NAMES.get)
    assert result.detected
    assert result.camped_location_id == 4 and result.visit_count == 3
