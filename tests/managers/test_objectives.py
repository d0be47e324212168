"""ObjectiveManager: discovery from game state or an LLM, completion only when verified, staleness."""

from __future__ import annotations

import pytest

from managers.map_graph import MapGraph, Room
from managers.objectives import ObjectiveManager
from session.config import LoopBreakConfig
from session.context import ObjectiveReview
from session.records import GameObject, GameView, TurnRecord
from tests.factories import turn_record

WEST_OF_HOUSE, NORTH_OF_HOUSE, FOREST = 180, 81, 50
LEAFLET = GameObject(10, "leaflet")
MAILBOX = GameObject(11, "small mailbox")
LANTERN = GameObject(12, "brass lantern")
COMPLETION_KEYS = {
    "objective",
    "completed_turn",
    "completion_action",
    "completion_response",
    "completion_location",
    "completion_score",
}


def make_record(
    turn: int,
    command: str,
    *,
    room_before: int = WEST_OF_HOUSE,
    room_after: int | None = None,
    room_name_after: str = "",
    score_before: int = 0,
    score_after: int | None = None,
    inventory_before: tuple[str, ...] = (),
    inventory_after: tuple[str, ...] | None = None,
    response: str = "Nothing happens.",
    new_room: bool = False,
    new_world_state: bool = False,
) -> TurnRecord:
    room_after = room_before if room_after is None else room_after
    return turn_record(
        turn,
        command=command,
        room_id_before=room_before,
        room_name_before="West of House",
        room_id_after=room_after,
        room_name_after=room_name_after or ("West of House" if room_after == WEST_OF_HOUSE else f"Room {room_after}"),
        score_before=score_before,
        score_after=score_after,
        world_hash_before="before",
        world_hash_after="after",
        inventory_before=inventory_before,
        inventory_after=inventory_after,
        response=response,
        new_room=new_room,
        new_world_state=new_world_state,
    )


def west_view(objects=(MAILBOX, LEAFLET), inventory=()) -> GameView:
    return GameView(WEST_OF_HOUSE, "West of House", 0, 0, tuple(inventory), tuple(objects), "h", "")


def west_map() -> MapGraph:
    """North is a known exit, south failed: untried starts with east, west."""
    game_map = MapGraph()
    game_map.rooms[WEST_OF_HOUSE] = Room(WEST_OF_HOUSE, "West of House", exits={"north": NORTH_OF_HOUSE})
    game_map.rooms[WEST_OF_HOUSE].failed_exits.add("south")
    return game_map


def state_manager(**config) -> ObjectiveManager:
    return ObjectiveManager(LoopBreakConfig(**config), mode="state")


# -- state mode: discovery -----------------------------------------------------------------------------------
def test_state_discovery_from_untried_exits_and_room_items():
    objectives = state_manager()
    game_map = west_map()
    objectives.discover(1, west_view(), game_map)
    assert objectives.current() == (
        "Explore east from West of House",
        "Explore west from West of House",
        "Take the small mailbox",
        "Take the leaflet",
    )
    assert game_map.untried_directions(WEST_OF_HOUSE)[:2] == ["east", "west"]
    # Discovering again adds no duplicates.
    objectives.discover(2, west_view(), game_map)
    assert len(objectives.current()) == 4


def test_state_discovery_skips_items_already_held_and_respects_max_objectives():
    objectives = state_manager()
    objectives.discover(1, west_view(objects=(MAILBOX, LEAFLET), inventory=(LEAFLET,)), west_map())
    assert "Take the leaflet" not in objectives.current()
    assert "Take the small mailbox" in objectives.current()

    capped = state_manager(max_objectives=2)
    capped.discover(1, west_view(), west_map())
    assert capped.current() == ("Take the small mailbox", "Take the leaflet")  # the oldest were dropped


# -- state mode: completion ----------------------------------------------------------------------------------
def test_exit_objective_completes_only_when_the_room_id_changes():
    objectives = state_manager()
    objectives.discover(1, west_view(), west_map())
    # "e" elsewhere does nothing; "e" here that moves completes.
    assert objectives.observe(make_record(2, "e", room_before=FOREST, room_after=WEST_OF_HOUSE)) == []
    done = objectives.observe(
        make_record(
            3, "go east", room_after=FOREST, room_name_after="Forest", score_after=0, response="  Forest\nTrees.  "
        )
    )
    assert done == [
        {
            "objective": "Explore east from West of House",
            "completed_turn": 3,
            "completion_action": "go east",
            "completion_response": "Forest\nTrees.",
            "completion_location": "Forest",
            "completion_score": 0,
        }
    ]
    assert set(done[0]) == COMPLETION_KEYS
    assert objectives.completed_objectives == done
    assert "Explore east from West of House" not in objectives.current()


def test_failed_exit_drops_objective_without_completing():
    objectives = state_manager()
    game_map = west_map()
    objectives.discover(1, west_view(), game_map)
    record = make_record(2, "west", response="You can't go that way.")
    game_map.observe(record)
    assert objectives.observe(record) == []
    assert "Explore west from West of House" not in objectives.current()
    assert objectives.completed_objectives == []
    # The map now knows west failed; the next discovery proposes another untried exit instead.
    objectives.discover(3, west_view(), game_map)
    assert "Explore west from West of House" not in objectives.current()
    assert "Explore northeast from West of House" in objectives.current()


def test_take_objective_completes_only_when_item_is_newly_held():
    objectives = state_manager()
    objectives.discover(1, west_view(), west_map())
    # Already held before this turn: not a completion (and no take verb: kept).
    held = make_record(2, "inventory", inventory_before=("leaflet",), inventory_after=("leaflet",))
    assert objectives.observe(held) == []
    assert "Take the leaflet" in objectives.current()
    done = objectives.observe(make_record(3, "take leaflet", inventory_after=("leaflet",), response="Taken."))
    assert [c["objective"] for c in done] == ["Take the leaflet"]
    assert set(done[0]) == COMPLETION_KEYS and done[0]["completion_response"] == "Taken."


def test_failed_take_drops_objective_without_completing():
    objectives = state_manager()
    objectives.discover(1, west_view(), west_map())
    assert objectives.observe(make_record(2, "take mailbox", response="It is securely anchored.")) == []
    assert "Take the small mailbox" not in objectives.current()
    assert objectives.completed_objectives == []
    # A take of something else does not drop it.
    assert "Take the leaflet" in objectives.current()


def test_completed_objective_is_never_rediscovered_or_completed_twice():
    objectives = state_manager()
    game_map = west_map()
    objectives.discover(1, west_view(), game_map)
    take = make_record(2, "take leaflet", inventory_after=("leaflet",), response="Taken.")
    assert len(objectives.observe(take)) == 1
    drop = make_record(3, "drop leaflet", inventory_before=("leaflet",), inventory_after=(), response="Dropped.")
    assert objectives.observe(drop) == []
    objectives.discover(4, west_view(), game_map)  # the leaflet lies in the room again
    assert "Take the leaflet" not in objectives.current()
    assert objectives.observe(make_record(5, "take leaflet", inventory_after=("leaflet",))) == []
    assert [c["objective"] for c in objectives.completed_objectives] == ["Take the leaflet"]

    # Same for an exit: walk east (completes), come back, rediscover: no second "Explore east".
    east = make_record(6, "east", room_after=FOREST)
    game_map.observe(east)
    assert len(objectives.observe(east)) == 1
    objectives.discover(7, west_view(), game_map)
    assert "Explore east from West of House" not in objectives.current()
    assert objectives.observe(make_record(8, "east", room_after=FOREST)) == []
    assert len(objectives.completed_objectives) == 2


# -- staleness -----------------------------------------------------------------------------------------------
def test_discovered_objectives_go_stale_without_progress():
    objectives = state_manager(objective_staleness_turns=10)
    objectives.discover(3, west_view(), west_map())
    objectives.prune(12, last_progress_turn=0)  # 9 turns since discovery
    assert len(objectives.current()) == 4
    objectives.prune(13, last_progress_turn=0)  # 10 turns
    assert objectives.current() == ()
    assert objectives.completed_objectives == []


def test_progress_postpones_staleness():
    objectives = state_manager(objective_staleness_turns=10)
    objectives.discover(3, west_view(), west_map())
    objectives.prune(13, last_progress_turn=8)  # only 5 turns since the last progress
    assert len(objectives.current()) == 4
    objectives.prune(18, last_progress_turn=8)
    assert objectives.current() == ()


# -- llm mode: the critic's reviews --------------------------------------------------------------------------------
MAILBOX_RESPONSE = "Opening the small mailbox reveals a leaflet."


def review(completed=(), proposed=()) -> ObjectiveReview:
    return ObjectiveReview(tuple(completed), tuple(proposed))


def llm_manager(*proposed, **config) -> ObjectiveManager:
    manager = ObjectiveManager(LoopBreakConfig(**config), mode="llm")
    manager.review(1, review(proposed=proposed), None)
    return manager


def opened(turn: int = 2, **fields) -> TurnRecord:
    return make_record(turn, "open mailbox", response=MAILBOX_RESPONSE, **{"new_world_state": True, **fields})


def test_llm_mode_discovers_nothing_from_game_state():
    manager = ObjectiveManager(LoopBreakConfig(), mode="llm")
    manager.discover(1, west_view(), west_map())
    assert manager.current() == ()


def test_review_is_wanted_on_discovery_turns_and_after_a_change():
    manager = ObjectiveManager(LoopBreakConfig(objective_update_interval=10), mode="llm")
    quiet = make_record(4, "look")
    assert manager.wants_review(1, None) and manager.wants_review(10, quiet) and manager.wants_review(20, quiet)
    assert not manager.wants_review(5, quiet)
    assert not manager.wants_review(5, opened(4))  # a change, but nothing open to complete
    manager.review(1, review(proposed=["Open the mailbox"]), None)
    assert manager.wants_review(5, opened(4)) and not manager.wants_review(5, quiet)
    assert not ObjectiveManager(LoopBreakConfig(), mode="state").wants_review(1, None)


def test_review_adds_new_objectives_once():
    manager = ObjectiveManager(LoopBreakConfig(), mode="llm")
    _, added = manager.review(1, review(proposed=["Open the mailbox", "Read the leaflet"]), None)
    assert added == ["Open the mailbox", "Read the leaflet"]
    _, again = manager.review(2, review(proposed=["open the  MAILBOX", "Enter the house"]), None)
    assert again == ["Enter the house"]
    assert manager.current() == ("Open the mailbox", "Read the leaflet", "Enter the house")


def test_llm_claim_with_evidence_in_response_on_a_novel_turn_completes():
    manager = llm_manager("Open the mailbox")
    done, _ = manager.review(3, review(completed=[("open the MAILBOX", "Reveals   a\nLEAFLET")]), opened(2))
    assert [c["objective"] for c in done] == ["Open the mailbox"]
    assert set(done[0]) == COMPLETION_KEYS and done[0]["completion_action"] == "open mailbox"
    assert done[0]["completed_turn"] == 2  # the turn that did it, read one turn later
    assert manager.current() == () and manager.completed() == ("Open the mailbox",)


def test_llm_claim_without_evidence_in_response_is_rejected():
    manager = llm_manager("Open the mailbox", "Read the leaflet")
    claims = [
        ("Open the mailbox", "the mailbox is now open"),
        ("Read the leaflet", "leaflet"),
        ("Kill the troll", "reveals a leaflet"),
    ]
    done, _ = manager.review(3, review(completed=claims), opened(2))
    # Evidence not quoted from the response; evidence too short (< 8 chars); an objective that was never listed.
    assert done == [] and manager.completed_objectives == []
    assert set(manager.current()) == {"Open the mailbox", "Read the leaflet"}


@pytest.mark.parametrize("kind", ["nothing_new", "only_old_room"])
def test_llm_claim_on_a_turn_that_changed_nothing_new_is_rejected(kind):
    """new_world_state False, score unchanged, new_room False: no completion, whatever the critic says."""
    manager = llm_manager("Open the mailbox")
    room_after = NORTH_OF_HOUSE if kind == "only_old_room" else None  # moved, but into a known room
    judged = opened(2, room_after=room_after, new_world_state=False)
    done, _ = manager.review(3, review(completed=[("Open the mailbox", "reveals a leaflet")]), judged)
    assert done == [] and manager.current() == ("Open the mailbox",)


@pytest.mark.parametrize("novel", ["score", "new_room"])
def test_llm_claim_on_score_or_new_room_turn_is_checked(novel):
    manager = llm_manager("Open the mailbox")
    judged = opened(2, new_world_state=False, score_after=5 if novel == "score" else None, new_room=novel == "new_room")
    done, _ = manager.review(3, review(completed=[("Open the mailbox", "reveals a leaflet")]), judged)
    assert len(done) == 1


def test_llm_completed_objective_is_not_rediscovered():
    manager = llm_manager("Open the mailbox")
    manager.review(3, review(completed=[("Open the mailbox", "reveals a leaflet")]), opened(2))
    _, added = manager.review(10, review(proposed=["Open the mailbox", "Read the leaflet"]), None)
    assert added == ["Read the leaflet"] and manager.current() == ("Read the leaflet",)


def test_llm_duplicate_claim_completes_an_objective_once():
    manager = llm_manager("Open the mailbox")
    claims = [("Open the mailbox", "reveals a leaflet"), ("open the mailbox", "opening the small mailbox")]
    done, _ = manager.review(3, review(completed=claims), opened(2))
    assert [c["objective"] for c in done] == ["Open the mailbox"]
    assert len(manager.completed_objectives) == 1


def test_restore_rebuilds_llm_objectives_from_the_records():
    live = llm_manager("Open the mailbox", "Read the leaflet")
    done, _ = live.review(3, review(completed=[("Open the mailbox", "reveals a leaflet")]), opened(2))
    restored = ObjectiveManager(LoopBreakConfig(), mode="llm")
    restored.restore(turn_record(1, objectives_added=["Open the mailbox", "Read the leaflet"]))
    restored.restore(turn_record(3, objectives_completed=done))
    assert restored.current() == live.current() and restored.completed() == live.completed()
