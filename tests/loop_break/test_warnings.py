"""The stuck warning: `build_stuck_warning` and its use by `LoopBreak.status()`."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from managers.loop_break import DestinationPredictor, LoopBreak
from managers.loop_break.warnings import build_stuck_warning
from managers.map_graph import MapGraph, Room
from session.config import LoopBreakConfig
from session.records import GameObject, GameView, TurnRecord
from tests.factories import seed_loop_break, turn_record
from tests.helpers import raised

CELLAR, TROLL_ROOM = 60, 61
SIGNALS = ("score", "objective", "new_room")
OBJECTIVES = tuple(f"Objective number {i}" for i in range(1, 8))


def make_record(turn: int, command: str = "wait", room: int = CELLAR) -> TurnRecord:
    return turn_record(
        turn,
        command=command,
        room_id_before=room,
        room_name_before="Cellar",
        room_id_after=room,
        room_name_after="Cellar",
        score_before=25,
        response="Time passes.",
    )


def cellar_view() -> GameView:
    return GameView(CELLAR, "Cellar", 25, 30, (GameObject(5, "brass lantern"),), (GameObject(6, "trap door"),), "h", "")


def cellar_map() -> MapGraph:
    game_map = MapGraph()
    game_map.rooms[CELLAR] = Room(CELLAR, "Cellar", exits={"north": TROLL_ROOM})
    game_map.rooms[CELLAR].failed_exits.update({"east", "west"})
    game_map.rooms[TROLL_ROOM] = Room(TROLL_ROOM, "Troll Room", exits={"south": CELLAR})
    return game_map


def make_loop_break(**config) -> LoopBreak:
    game_map = cellar_map()
    return LoopBreak(LoopBreakConfig(**seed_loop_break(config)), game_map, DestinationPredictor("map", game_map))


def countdown(text: str) -> int:
    return int(re.search(r"END THIS EPISODE in (-?\d+) turns", text).group(1))


def suggestion(text: str, prefix: str) -> list[str]:
    for line in text.splitlines():
        if line.startswith(f"- {prefix}: "):
            return line.split(": ", 1)[1].split(", ")
    return []


# -- build_stuck_warning -------------------------------------------------------------------------------------
@pytest.mark.parametrize("turns_stuck, remaining", [(20, 20), (39, 1), (40, 0), (55, 0)])
def test_countdown_never_negative(turns_stuck, remaining):
    text = build_stuck_warning(turns_stuck, 40 - turns_stuck, SIGNALS)
    assert countdown(text) == remaining
    assert f"NO PROGRESS for {turns_stuck} turns" in text
    assert "DIE" not in text  # a countdown of the harness, never to be read as a death in the game


def test_warning_with_objectives_points_to_them_without_listing_them():
    """The prompt lists the objectives once, in their own block: the warning only points there."""
    text = build_stuck_warning(25, 15, SIGNALS, OBJECTIVES)
    assert "complete an objective" in text
    assert "increase your score" in text
    assert "Objective number" not in text
    assert "Work on the objectives listed above" in text


def test_warning_without_objectives_does_not_mention_objectives():
    text = build_stuck_warning(25, 15, SIGNALS, ())
    assert "objective" not in text.lower()
    assert "increase your score" in text and "reach a room you have never visited" in text


def test_warning_phrase_follows_the_signals():
    assert "END THIS EPISODE in 15 turns unless you increase your score." in build_stuck_warning(25, 15, ("score",))
    score_or_objective = build_stuck_warning(25, 15, ("score", "objective"), ("Open the trap door",))
    assert "unless you increase your score or complete an objective." in score_or_objective


def test_warning_lists_hints_and_unexplored_exits():
    text = build_stuck_warning(25, 15, SIGNALS, (), ("examine lantern", "up"), ("south", "down"))
    assert suggestion(text, "Commands you have not tried recently") == ["examine lantern", "up"]
    assert suggestion(text, "Directions never tried from here (not verified)") == ["south", "down"]
    plain = build_stuck_warning(25, 15, SIGNALS)
    assert "SUGGESTIONS" not in plain and "Directions never tried" not in plain


# -- through LoopBreak.status() -------------------------------------------------------------------------------
def run_turns(loop_break: LoopBreak, last: int, commands=("wait",)):
    for turn in range(1, last + 1):
        loop_break.observe(make_record(turn, commands[turn % len(commands)]))


def test_status_no_warning_below_threshold():
    loop_break = make_loop_break(warning_lead_turns=20, no_progress={"max_turns": 40})
    run_turns(loop_break, 19)
    events: list[dict] = []
    status = raised(events, loop_break.status(20, cellar_view(), OBJECTIVES))  # 19 turns stuck before turn 20
    assert status.turns_stuck == 19 and status.warning == "" and events == []


@pytest.mark.parametrize("observed", [20, 30, 45])
def test_status_warning_at_and_after_threshold(observed):
    loop_break = make_loop_break(warning_lead_turns=20, no_progress={"max_turns": 40})
    run_turns(loop_break, observed)
    events: list[dict] = []
    status = raised(events, loop_break.status(observed + 1, cellar_view(), OBJECTIVES[:2]))
    assert status.turns_stuck == observed
    assert f"NO PROGRESS for {observed} turns" in status.warning
    assert countdown(status.warning) == max(0, 40 - observed)
    assert "complete an objective" in status.warning and "Work on the objectives listed above" in status.warning
    assert status.warning in status.text
    (event,) = events
    assert event["event_type"] == "loop_break_warning"
    assert event["turns_stuck"] == observed and event["turns_remaining"] == max(0, 40 - observed)
    assert event["turn"] == observed + 1 and event["last_progress_turn"] == 0


def test_status_warning_without_objectives_omits_them():
    loop_break = make_loop_break()
    run_turns(loop_break, 25)
    status = loop_break.status(26, cellar_view(), ())
    assert status.warning and "objective" not in status.warning.lower()


def test_status_warning_omits_objective_phrase_when_objective_progress_disabled():
    loop_break = make_loop_break(enable_objective_based_progress=False)
    run_turns(loop_break, 25)
    status = loop_break.status(26, cellar_view(), OBJECTIVES[:2])
    assert "complete an objective" not in status.warning
    assert "Work on the objectives listed above" in status.warning  # still pointed to as guidance


def test_status_no_warning_when_disabled():
    loop_break = make_loop_break(enable_stuck_warnings=False)
    run_turns(loop_break, 30)
    events: list[dict] = []
    status = raised(events, loop_break.status(31, cellar_view(), OBJECTIVES))
    assert status.turns_stuck == 30 and status.warning == "" and events == []


def test_status_hints_and_unexplored_exits():
    loop_break = make_loop_break()
    run_turns(loop_break, 25, commands=("north", "wait"))
    status = loop_break.status(26, cellar_view(), ())
    hints = suggestion(status.warning, "Commands you have not tried recently")
    assert hints and len(hints) <= 5
    assert "north" not in hints and "wait" not in hints  # tried within action_novelty_window
    untried = suggestion(status.warning, "Directions never tried from here (not verified)")
    assert untried == loop_break.game_map.untried_directions(CELLAR)
    assert "north" not in untried and "east" not in untried and "south" in untried


def test_status_hints_absent_when_disabled():
    loop_break = make_loop_break(enable_exploration_hints=False)
    run_turns(loop_break, 25)
    status = loop_break.status(26, cellar_view(), ())
    assert status.warning
    assert "Commands you have not tried recently" not in status.warning
    assert "Directions never tried from here (not verified)" not in status.warning


# -- warnings follow the stop rules, not a quiet score ---------------------------------------------------------
def test_quiet_but_varied_play_is_not_warned_until_the_no_progress_limit_nears():
    """Default settings: turns without progress that try a new thing every other turn and look round or check the
    inventory between show no warning at 30 turns; the warning comes
    warning_lead_turns turns before the no-progress stop."""
    config = LoopBreakConfig()
    game_map = cellar_map()
    loop_break = LoopBreak(config, game_map, DestinationPredictor("map", game_map))
    warned = []
    for turn in range(1, config.no_progress.max_turns + 1):
        if loop_break.status(turn, cellar_view(), ()).warning:
            warned.append(turn - 1)  # turns stuck when warned
        command = f"examine thing {turn}" if turn % 2 else ("look", "inventory")[turn // 2 % 2]
        loop_break.observe(make_record(turn, command))
    lead = config.warning_lead_turns
    assert warned and min(warned) == config.no_progress.max_turns - lead


@pytest.mark.parametrize("cycle_turns, rule", [(16, "cycle"), (0, "repetition")])
def test_repetitive_play_is_warned_before_the_repetition_stop(cycle_turns, rule):
    """`look`, `listen` again and again: warned before the stop, by the cycle rule (the same two commands in turn) or,
    with it off, the repetition rule."""
    config = LoopBreakConfig(cycle={"turns": cycle_turns})
    game_map = cellar_map()
    loop_break = LoopBreak(config, game_map, DestinationPredictor("map", game_map))
    first_warning = None
    for turn in range(1, config.no_progress.max_turns):
        status = loop_break.status(turn, cellar_view(), ())
        if status.warning and first_warning is None:
            first_warning = turn
            assert countdown(status.warning) <= config.warning_lead_turns
        verdict = loop_break.observe(make_record(turn, ("look", "listen")[turn % 2]))
        if verdict.terminate:
            break
    [stop] = [e for e in verdict.events if e["event_type"] == "stuck_termination"]
    assert stop["rule"] == rule and turn < config.no_progress.max_turns
    assert first_warning is not None and first_warning < turn


def test_hints_never_suggest_dropping_what_is_carried():
    """No hint tells the player to drop what it carries ("drop sword, drop knife, drop rope"), a weapon and a light
    among them."""
    loop_break = make_loop_break()
    run_turns(loop_break, 25)
    sword = GameObject(9, "sword")
    view = replace(cellar_view(), inventory=(sword, GameObject(5, "brass lantern")))
    status = loop_break.status(26, view, (), things=("trap door",))
    assert status.warning and "drop" not in status.text
