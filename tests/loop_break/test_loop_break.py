"""Design 000's unit tests (docs/design.md) against this code's loop-break classes, plus feature flags and the
validation of the `[tool.zorkgpt.loop_break]` section.

Mapping of the design's wording to this code:
- `game_over_flag` / `termination_reason` -> `Verdict.terminate` / `Verdict.reason` returned by `LoopBreak.observe()`
- `_get_turns_since_score_change` -> `ProgressTracker.turns_stuck` / `ProgressResult.turns_stuck`
- `oscillation_info` / `_location_id_history` -> `OscillationCount.detect()` / `OscillationCount.history`
- `camping_info` -> `CampingCount.detect()`
- programmatic penalties -> `apply_loop_penalties()` and `LoopBreak.adjust()` (map-based destination prediction)
"""

from __future__ import annotations

import pytest

from managers.loop_break import DestinationPredictor, LoopBreak
from managers.loop_break.room_loops import (
    CampingCount,
    OscillationCount,
    OscillationResult,
    apply_loop_penalties,
)
from managers.map_graph import MapGraph, Room
from session.config import ConfigError, GameConfiguration, LoopBreakConfig
from session.records import GameView, Judgement, TurnRecord
from tests.factories import detections_of, seed_loop_break, turn_record
from tests.helpers import raised

DAM, LOBBY, MAINTENANCE, DAM_BASE = 15, 18, 20, 22
NAMES = {DAM: "Dam", LOBBY: "Lobby", MAINTENANCE: "Maintenance Room", DAM_BASE: "Dam Base"}


# -- factories -----------------------------------------------------------------------------------------------
def make_record(
    turn: int,
    room_after: int | None = 10,
    *,
    room_before: int | None = None,
    command: str = "look",
    score_before: int = 0,
    score_after: int | None = None,
    new_room: bool = False,
    new_world_state: bool = False,
    objectives_completed: list[dict] | None = None,
) -> TurnRecord:
    room_before = room_after if room_before is None else room_before
    return turn_record(
        turn,
        command=command,
        room_id_before=room_before,
        room_name_before=NAMES.get(room_before, f"Room {room_before}"),
        room_id_after=room_after,
        room_name_after=NAMES.get(room_after, f"Room {room_after}"),
        score_before=score_before,
        score_after=score_after,
        response="Nothing happens.",
        new_room=new_room,
        new_world_state=new_world_state,
        objectives_completed=list(objectives_completed or []),
    )


def make_view(room_id: int, room_name: str = "", world_hash: str = "hash") -> GameView:
    return GameView(
        room_id=room_id,
        room_name=room_name or NAMES.get(room_id, f"Room {room_id}"),
        score=0,
        moves=0,
        inventory=(),
        room_objects=(),
        world_hash=world_hash,
        text="",
    )


def dam_map() -> MapGraph:
    """Dam <-> Lobby by north/south; Dam -> Dam Base by south; Lobby -> Maintenance by east."""
    game_map = MapGraph()
    game_map.rooms[DAM] = Room(DAM, "Dam", exits={"north": LOBBY, "south": DAM_BASE})
    game_map.rooms[LOBBY] = Room(LOBBY, "Lobby", exits={"south": DAM, "east": MAINTENANCE})
    game_map.rooms[MAINTENANCE] = Room(MAINTENANCE, "Maintenance Room", exits={"west": LOBBY})
    game_map.rooms[DAM_BASE] = Room(DAM_BASE, "Dam Base", exits={"north": DAM})
    return game_map


def make_loop_break(game_map: MapGraph | None = None, **config) -> LoopBreak:
    game_map = game_map if game_map is not None else dam_map()
    return LoopBreak(LoopBreakConfig(**seed_loop_break(config)), game_map, DestinationPredictor("map", game_map))


def stuck_turns(loop_break: LoopBreak, first: int, last: int, room: int = DAM, score: int = 40):
    """Feed turns first..last (inclusive) without any progress; returns {turn: verdict}."""
    return {
        turn: loop_break.observe(make_record(turn, room, score_before=score, command="wait"))
        for turn in range(first, last + 1)
    }


def oscillate(loop_break: LoopBreak, turns: int, a: int = LOBBY, b: int = DAM):
    """Turn 1 ends in a, turn 2 in b, ... (no progress). Returns the verdicts."""
    verdicts = []
    previous = b
    for turn in range(1, turns + 1):
        here = a if turn % 2 else b
        command = "north" if here == LOBBY else "south"
        verdicts.append(loop_break.observe(make_record(turn, here, room_before=previous, command=command)))
        previous = here
    return verdicts


def name_of(room_id):
    return NAMES.get(room_id, f"Location_{room_id}")


# -- progress velocity ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("interval, expected_turn", [(1, 31), (10, 40)])
def test_progress_velocity_terminates_after_threshold(interval, expected_turn):
    """Episode terminates no_progress.max_turns turns after the last score change (checked every `interval` turns)."""
    loop_break = make_loop_break(no_progress={"max_turns": 30}, stuck_check_interval=interval)
    first = loop_break.observe(make_record(1, DAM, score_before=0, score_after=40))  # score set to 40
    assert first.progress.signals == ("score",) and not first.terminate

    verdicts = stuck_turns(loop_break, 2, expected_turn)
    terminated = [turn for turn, verdict in verdicts.items() if verdict.terminate]
    assert terminated == [expected_turn]
    final = verdicts[expected_turn]
    assert final.reason == "stuck_no_progress"
    assert final.progress.turns_stuck == expected_turn - 1
    (event,) = [e for e in final.events if e["event_type"] == "stuck_termination"]
    assert event["turns_stuck"] == expected_turn - 1 and event["score"] == 40 and event["last_progress_turn"] == 1


def test_progress_velocity_resets_on_score_change():
    """20 stuck turns, a score increase, 20 more: 40 turns in all but only 20 since the change -> no termination."""
    loop_break = make_loop_break(no_progress={"max_turns": 30})
    loop_break.observe(make_record(1, DAM, score_before=0, score_after=40))
    before = stuck_turns(loop_break, 2, 21)
    assert before[21].progress.turns_stuck == 20
    reset = loop_break.observe(make_record(22, DAM, score_before=40, score_after=50))
    assert reset.progress.turns_stuck == 0 and reset.progress.last_progress_turn == 22
    after = stuck_turns(loop_break, 23, 42, score=50)
    assert not any(v.terminate for v in (*before.values(), reset, *after.values()))
    assert after[42].progress.turns_stuck == 20
    assert loop_break.progress.turns_stuck(42) == 20
    # The threshold counts from the score change: terminated 30 turns after turn 22.
    later = stuck_turns(loop_break, 43, 52, score=50)
    assert [t for t, v in later.items() if v.terminate] == [52]


def test_configurable_stuck_threshold():
    """no_progress.max_turns=50: 49 turns without progress do not terminate, the 50th does."""
    loop_break = make_loop_break(no_progress={"max_turns": 50})
    verdicts = stuck_turns(loop_break, 1, 49)
    assert not any(v.terminate for v in verdicts.values())  # the default of 40 would have ended it at turn 40
    assert verdicts[49].progress.turns_stuck == 49
    fiftieth = loop_break.observe(make_record(50, DAM, score_before=40))
    assert fiftieth.terminate and fiftieth.reason == "stuck_no_progress"

    default = make_loop_break()
    assert next(t for t, v in stuck_turns(default, 1, 49).items() if v.terminate) == 40


# -- oscillation ---------------------------------------------------------------------------------------------
def feed_rooms(detector, rooms, start_turn: int = 1):
    previous = rooms[0]
    for offset, room in enumerate(rooms):
        detector.observe(make_record(start_turn + offset, room, room_before=previous))
        previous = room


def test_oscillation_detection_abab_pattern():
    """Dam (15) -> Lobby (18) -> Dam -> Lobby is an oscillation; ids and names come back in pattern order."""
    detector = OscillationCount()
    feed_rooms(detector, [DAM, LOBBY, DAM, LOBBY])
    result = detector.detect(name_of)
    assert result.detected
    assert result.pattern_ids == (DAM, LOBBY)
    assert result.pattern_names == ("Dam", "Lobby")


def test_oscillation_no_false_positive():
    """Normal exploration (four different rooms) is no oscillation; neither is staying put or A-B-A-C."""
    detector = OscillationCount()
    feed_rooms(detector, [DAM, LOBBY, MAINTENANCE, DAM_BASE])
    assert not detector.detect(name_of).detected

    same_room = OscillationCount()
    feed_rooms(same_room, [DAM, DAM, DAM, DAM])
    assert not same_room.detect(name_of).detected

    abac = OscillationCount()
    feed_rooms(abac, [DAM, LOBBY, DAM, MAINTENANCE])
    assert not abac.detect(name_of).detected

    short = OscillationCount()
    feed_rooms(short, [DAM, LOBBY, DAM])
    assert not short.detect(name_of).detected


def test_oscillation_uses_location_ids():
    """The history holds integer room ids; rooms are told apart by id, never by name."""
    detector = OscillationCount()
    feed_rooms(detector, [DAM, LOBBY, DAM, LOBBY])
    assert list(detector.history) == [DAM, LOBBY, DAM, LOBBY]
    assert all(type(room) is int for room in detector.history)
    assert all(type(room) is int for room in detector.detect(name_of).pattern_ids)

    # Four different rooms whose names alternate "Forest", "Clearing": no oscillation (ids differ).
    names = {30: "Forest", 31: "Clearing", 32: "Forest", 33: "Clearing"}
    by_name = OscillationCount()
    feed_rooms(by_name, [30, 31, 32, 33])
    assert not by_name.detect(names.get).detected

    # Two different rooms with the same name shuttled between: an oscillation (ids repeat).
    twins = OscillationCount()
    feed_rooms(twins, [30, 32, 30, 32])
    result = twins.detect(names.get)
    assert result.detected and result.pattern_ids == (30, 32) and result.pattern_names == ("Forest", "Forest")


# -- camping -------------------------------------------------------------------------------------------------
def test_camping_detection_threshold():
    """Dam (20) six times in a ten-turn window (threshold 5): camping, visit_count 6."""
    detector = CampingCount(window=10, threshold=5)
    feed_rooms(detector, [20, 21, 20, 22, 20, 20, 23, 20, 24, 20])
    result = detector.detect(name_of)
    assert result.detected
    assert result.camped_location_id == 20
    assert result.camped_location_name == "Maintenance Room"
    assert result.visit_count == 6
    assert result.window_size == 10


def test_camping_no_false_positive():
    """Dam three times and Lobby twice in ten turns: no camping."""
    detector = CampingCount(window=10, threshold=5)
    feed_rooms(detector, [DAM, LOBBY, DAM, 30, LOBBY, 31, DAM, 32, 33, 34])
    assert not detector.detect(name_of).detected


def test_camping_window_sliding():
    """Dam ten times in turns 1-10, other rooms in turns 11-20: at turn 20 those Dam visits are out of the window."""
    detector = CampingCount(window=10, threshold=5)
    feed_rooms(detector, [DAM] * 10)
    assert detector.detect(name_of).detected
    seen = []
    for turn, room in enumerate(range(100, 110), start=11):
        detector.observe(make_record(turn, room))
        seen.append(detector.detect(name_of).detected)
    # Still camping while five Dam visits remain in the window (turns 11-15), not after.
    assert seen == [True] * 5 + [False] * 5
    assert not detector.detect(name_of).detected


# -- penalties -----------------------------------------------------------------------------------------------
OSCILLATION = OscillationResult(True, (DAM, LOBBY), ("Dam", "Lobby"))


def test_penalty_applied_on_oscillation_return():
    """A move back into the A-B-A-B pattern: 0.9 + (-0.8) = 0.1."""
    config = LoopBreakConfig()
    judgement = Judgement(0.9, "good move")
    adjusted = apply_loop_penalties(judgement, DAM, detections_of(oscillation=OSCILLATION), config.room_loops, name_of)
    assert adjusted.score == pytest.approx(0.1)
    assert adjusted.base_score == 0.9 and adjusted.base == 0.9
    assert len(adjusted.adjustments) == 1 and "Oscillation penalty" in adjusted.adjustments[0]
    assert "Dam → Lobby" in adjusted.adjustments[0] and "-0.80" in adjusted.adjustments[0]
    assert "Loop Detection Override" in adjusted.reason

    # The same through the LoopBreak: the learned map predicts "north" from the Dam leads to the Lobby.
    loop_break = make_loop_break(room_loops={"enable_location_penalty": False})
    oscillate(loop_break, 6)  # Lobby, Dam, Lobby, Dam, Lobby, Dam
    assert loop_break.detectors["room_loops"].active.oscillation.detected
    events: list[dict] = []
    through = raised(events, loop_break.adjust("north", Judgement(0.9, "good move"), make_view(DAM), turn=7)).judgement
    assert through.score == pytest.approx(0.1)
    (event,) = events
    assert event["event_type"] == "loop_penalty_applied"
    assert event["base_score"] == 0.9 and event["adjusted_score"] == pytest.approx(0.1)
    assert event["destination"] == LOBBY and event["action"] == "north" and event["turn"] == 7
    assert event["turned_to_reject"] is True  # 0.9 >= 0.5 (rejection threshold) > 0.1
    assert "Oscillation penalty" in event["reason"]


def test_bonus_applied_on_exploration():
    """A move out of the oscillation to a room outside it: min(1.0, 0.6 + 0.5) = 1.0."""
    config = LoopBreakConfig()
    adjusted = apply_loop_penalties(
        Judgement(0.6, "ok"), DAM_BASE, detections_of(oscillation=OSCILLATION), config.room_loops, name_of
    )
    assert adjusted.score == 1.0 and adjusted.base == 0.6
    assert "Exploration bonus" in adjusted.adjustments[0] and "+0.50" in adjusted.adjustments[0]

    loop_break = make_loop_break()
    oscillate(loop_break, 6)
    events: list[dict] = []
    through = raised(events, loop_break.adjust("south", Judgement(0.6, "ok"), make_view(DAM), turn=7)).judgement
    assert through.score == 1.0
    (event,) = events
    assert event["base_score"] == 0.6 and event["adjusted_score"] == 1.0 and event["destination"] == DAM_BASE
    assert event["turned_to_reject"] is False


def test_penalty_not_applied_without_prediction():
    """No predicted destination (not a move, or an exit the map does not know): the score is unchanged."""
    config = LoopBreakConfig()
    judgement = Judgement(0.8, "examine things")
    assert (
        apply_loop_penalties(judgement, None, detections_of(oscillation=OSCILLATION), config.room_loops, name_of)
        is judgement
    )

    loop_break = make_loop_break()
    oscillate(loop_break, 6)
    assert loop_break.detectors["room_loops"].active.oscillation.detected
    events: list[dict] = []
    view = make_view(DAM)
    for command in ("examine lamp", "west", "take all"):  # "west" from the Dam is not on the map
        assert raised(events, loop_break.adjust(command, judgement, view, turn=7)).judgement is judgement
    assert events == []


def test_score_clamping():
    """0.2 + (-0.8) -> 0.0 and 0.9 + 0.5 -> 1.0."""
    config = LoopBreakConfig()
    detections = detections_of(oscillation=OSCILLATION)
    low = apply_loop_penalties(Judgement(0.2, "meh"), LOBBY, detections, config.room_loops, name_of)
    assert low.score == 0.0 and low.base == 0.2
    high = apply_loop_penalties(Judgement(0.9, "great"), DAM_BASE, detections, config.room_loops, name_of)
    assert high.score == 1.0 and high.base == 0.9


def test_penalties_stack_with_location_revisit_penalty_and_clamp():
    """With the revisit penalty on (default), returning into the oscillation adds both penalties, clamped at 0."""
    loop_break = make_loop_break()
    oscillate(loop_break, 6)
    events: list[dict] = []
    adjusted = raised(events, loop_break.adjust("north", Judgement(0.9, "ok"), make_view(DAM), turn=7)).judgement
    assert adjusted.score == 0.0
    assert any("Oscillation penalty" in a for a in adjusted.adjustments)
    assert any("Revisit penalty" in a and "Lobby" in a for a in adjusted.adjustments)
    assert events[0]["turned_to_reject"] is True


def test_loop_penalty_event_not_turned_to_reject_when_already_below_threshold():
    loop_break = make_loop_break(room_loops={"enable_location_penalty": False})
    oscillate(loop_break, 6)
    events: list[dict] = []
    raised(events, loop_break.adjust("north", Judgement(0.4, "weak"), make_view(DAM), turn=7))
    (event,) = events
    assert event["base_score"] == 0.4 and event["adjusted_score"] == 0.0 and event["turned_to_reject"] is False


# -- feature flags -------------------------------------------------------------------------------------------
def test_flag_velocity_detection_disabled_turns_everything_off():
    loop_break = make_loop_break(enabled=False, no_progress={"max_turns": 30})
    assert not loop_break.enabled
    verdicts = oscillate(loop_break, 100)
    assert not any(v.terminate for v in verdicts)
    assert all(v.events == [] for v in verdicts)
    events: list[dict] = []
    status = raised(events, loop_break.status(101, make_view(DAM), ("Open the mailbox",)))
    assert status.warning == "" and status.text == "" and events == []
    judgement = Judgement(0.9, "ok")
    assert raised(events, loop_break.adjust("north", judgement, make_view(DAM), turn=101)).judgement is judgement
    assert events == []

    enabled = make_loop_break(no_progress={"max_turns": 30})
    assert any(v.terminate for v in oscillate(enabled, 100))


def test_flag_loop_detection_disabled_no_detections_no_penalties():
    loop_break = make_loop_break(room_loops={"enabled": False}, no_progress={"max_turns": 30})
    verdicts = oscillate(loop_break, 24)
    assert (
        not loop_break.detectors["room_loops"].active.any
        and loop_break.detectors["room_loops"].active.recent_rooms == ()
    )
    assert not any(e["event_type"] == "loop_detected" for v in verdicts for e in v.events)
    events: list[dict] = []
    judgement = Judgement(0.9, "ok")
    for command in ("north", "south"):
        assert raised(events, loop_break.adjust(command, judgement, make_view(DAM), turn=25)).judgement is judgement
    assert events == []
    status = loop_break.status(25, make_view(DAM), ())
    assert status.loop_info == ""
    # Velocity detection still works.
    assert [i + 1 for i, v in enumerate(oscillate(make_loop_break(room_loops={"enabled": False}), 40)) if v.terminate]

    enabled = make_loop_break(no_progress={"max_turns": 30})
    verdicts = oscillate(enabled, 24)
    assert enabled.detectors["room_loops"].active.oscillation.detected
    kinds = [e["kind"] for v in verdicts for e in v.events if e["event_type"] == "loop_detected"]
    assert "oscillation" in kinds and "region_loop" in kinds


def test_flag_location_penalty_disabled_no_revisit_penalty():
    """A move into a room visited within location_revisit_window: -0.2 when enabled, nothing when disabled."""

    def wander(loop_break):
        # Dam, Lobby, Maintenance, Lobby, Dam: no oscillation (A-B-C-B-A), no camping, window too short for a region.
        previous = DAM
        for turn, room in enumerate([DAM, LOBBY, MAINTENANCE, LOBBY, DAM], start=1):
            loop_break.observe(make_record(turn, room, room_before=previous, command="go"))
            previous = room

    on = make_loop_break()
    wander(on)
    assert not on.detectors["room_loops"].active.any and LOBBY in on.detectors["room_loops"].active.recent_rooms
    events: list[dict] = []
    adjusted = raised(events, on.adjust("north", Judgement(0.7, "ok"), make_view(DAM), turn=6)).judgement
    assert adjusted.score == pytest.approx(0.5) and "Revisit penalty" in adjusted.adjustments[0]
    assert events[0]["turned_to_reject"] is False  # 0.5 is not below the 0.5 threshold

    off = make_loop_break(room_loops={"enable_location_penalty": False})
    wander(off)
    judgement = Judgement(0.7, "ok")
    assert off.detectors["room_loops"].active.recent_rooms == ()
    assert off.adjust("north", judgement, make_view(DAM), turn=6).judgement is judgement
    # apply_loop_penalties honours the flag too, even when given recent rooms.
    detections = detections_of(recent_rooms=(LOBBY,))
    assert apply_loop_penalties(judgement, LOBBY, detections, off.config.room_loops, name_of) is judgement


@pytest.mark.parametrize("min_stuck", [0, 4, 7])
def test_flag_penalty_min_turns_stuck_gates_detections_and_penalties(min_stuck):
    loop_break = make_loop_break(penalty_min_turns_stuck=min_stuck, room_loops={"enable_location_penalty": False})
    judgement = Judgement(0.9, "ok")
    previous = DAM
    for turn in range(1, 9):
        here = LOBBY if turn % 2 else DAM
        loop_break.observe(make_record(turn, here, room_before=previous))
        previous = here
        expected = turn >= max(4, min_stuck)  # A-B-A-B needs four turns; the gate needs min_stuck stuck turns
        assert loop_break.detectors["room_loops"].active.oscillation.detected is expected, turn
        other = DAM if here == LOBBY else LOBBY
        command = "north" if here == DAM else "south"
        adjusted = loop_break.adjust(command, judgement, make_view(here), turn=turn + 1).judgement
        assert (adjusted.score == pytest.approx(0.1)) is expected, turn
        assert loop_break.predictor.predict(here, command) == other


def test_flag_penalty_min_turns_stuck_resets_with_progress():
    loop_break = make_loop_break(penalty_min_turns_stuck=4, room_loops={"enable_location_penalty": False})
    oscillate(loop_break, 6)
    assert loop_break.detectors["room_loops"].active.oscillation.detected
    loop_break.observe(make_record(7, LOBBY, room_before=DAM, score_before=0, score_after=5))
    assert not loop_break.detectors["room_loops"].active.any  # progress: turns_stuck 0 < 4
    judgement = Judgement(0.9, "ok")
    assert loop_break.adjust("south", judgement, make_view(LOBBY), turn=8).judgement is judgement


def test_flag_stuck_check_interval_terminates_only_on_multiples():
    loop_break = make_loop_break(no_progress={"max_turns": 25}, stuck_check_interval=10)
    verdicts = stuck_turns(loop_break, 1, 45)
    assert [t for t, v in verdicts.items() if v.terminate] == [30, 40]
    assert verdicts[25].progress.turns_stuck == 25 and not verdicts[25].terminate

    every_turn = make_loop_break(no_progress={"max_turns": 25}, stuck_check_interval=1)
    assert [t for t, v in stuck_turns(every_turn, 1, 27).items() if v.terminate] == [25, 26, 27]


# -- configuration validation --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "key, value",
    [
        ("oscillation_return_penalty", 0.1),
        ("camping_return_penalty", 0.5),
        ("location_revisit_penalty", 0.2),
        ("region_loop_penalty", 0.01),
        ("oscillation_exploration_bonus", -0.1),
    ],
)
def test_config_rejects_penalty_above_zero_and_negative_bonus(key, value):
    with pytest.raises(ConfigError) as excinfo:
        GameConfiguration.from_dict({"loop_break": {"room_loops": {key: value}}})
    message = str(excinfo.value)
    assert f"tool.zorkgpt.loop_break.room_loops.{key}" in message
    assert repr(value) in message


def test_config_rejects_camping_threshold_above_window():
    with pytest.raises(ConfigError) as excinfo:
        GameConfiguration.from_dict({"loop_break": {"room_loops": {"camping_threshold": 11, "camping_window": 10}}})
    message = str(excinfo.value)
    assert "tool.zorkgpt.loop_break" in message
    assert "camping_threshold" in message and "camping_window" in message
    equal = {"camping_threshold": 10, "camping_window": 10}
    GameConfiguration.from_dict({"loop_break": {"room_loops": equal}})  # equal is fine


@pytest.mark.parametrize("lead, maximum", [(40, 40), (45, 40), (10, 10)])
def test_config_rejects_warning_lead_not_below_no_progress_max_turns(lead, maximum):
    with pytest.raises(ConfigError) as excinfo:
        GameConfiguration.from_dict({"loop_break": {"warning_lead_turns": lead, "no_progress": {"max_turns": maximum}}})
    message = str(excinfo.value)
    assert "tool.zorkgpt.loop_break" in message
    assert "warning_lead_turns" in message and "no_progress.max_turns" in message


def test_config_accepts_valid_loop_break_section_and_rejects_unknown_key():
    config = GameConfiguration.from_dict(
        {
            "loop_break": {
                "warning_lead_turns": 1,
                "no_progress": {"max_turns": 40},
                "room_loops": {"oscillation_return_penalty": -1.0},
            }
        }
    )
    assert config.loop_break.room_loops.oscillation_return_penalty == -1.0
    with pytest.raises(ConfigError) as excinfo:
        GameConfiguration.from_dict({"loop_break": {"max_turn_stuck": 40}})
    assert "tool.zorkgpt.loop_break.max_turn_stuck" in str(excinfo.value)
    assert "no_progress" in str(excinfo.value)  # the allowed keys are listed
