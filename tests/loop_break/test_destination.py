"""Destination prediction: from the learned map (`MapGraph.predict_destination`) and by lookahead on a snapshot of
the real story file (`DestinationPredictor("lookahead", ...)`), which must leave the game exactly as it was."""

from __future__ import annotations

import pytest

from managers.loop_break import DestinationPredictor
from managers.map_graph import MapGraph, Room
from session.jericho_session import JerichoSession
from session.records import TurnRecord

HUB = 1
EXITS = {
    "north": 2,
    "south": 3,
    "east": 4,
    "west": 5,
    "northeast": 6,
    "northwest": 7,
    "southeast": 8,
    "southwest": 9,
    "up": 10,
    "down": 11,
    "in": 12,
    "out": 13,
}
SEED = 12


def hub_map() -> MapGraph:
    game_map = MapGraph()
    game_map.rooms[HUB] = Room(HUB, "Hub", exits=dict(EXITS))
    return game_map


@pytest.mark.parametrize(
    "command, destination",
    [
        ("n", 2),
        ("north", 2),
        ("go north", 2),
        ("walk n", 2),
        ("NE", 6),
        ("  Go   NorthEast ", 6),
        ("sw", 9),
        ("u", 10),
        ("up", 10),
        ("d", 11),
        ("down", 11),
        ("in", 12),
        ("enter", 12),
        ("out", 13),
        ("exit", 13),
    ],
)
def test_map_predicts_destination_for_direction_spellings(command, destination):
    assert hub_map().predict_destination(HUB, command) == destination


@pytest.mark.parametrize("command", ["examine lamp", "take all", "open door", "go", "north door", "climb tree", ""])
def test_map_non_movement_is_none(command):
    assert hub_map().predict_destination(HUB, command) is None


def test_map_unknown_exit_or_room_is_none():
    game_map = MapGraph()
    game_map.rooms[HUB] = Room(HUB, "Hub", exits={"north": 2})
    assert game_map.predict_destination(HUB, "south") is None  # exit never walked
    assert game_map.predict_destination(99, "north") is None  # room never visited
    assert game_map.predict_destination(None, "north") is None


def test_map_learns_exits_from_moves():
    game_map = MapGraph()
    move = TurnRecord(
        turn=1,
        command="go north",
        agent_kind="test",
        forced=False,
        room_id_before=HUB,
        room_name_before="Hub",
        room_id_after=2,
        room_name_after="North",
        score_before=0,
        score_after=0,
        world_hash_before="a",
        world_hash_after="b",
        inventory_before=(),
        inventory_after=(),
        response="North",
        critic_base_score=1.0,
        critic_reason="",
        critic_adjusted_score=1.0,
        adjustments=(),
        would_reject=False,
        rejections=0,
        candidates=[],
        llm_calls={},
        llm_tokens={},
        wall_seconds=0.0,
    )
    game_map.observe(move)
    assert game_map.predict_destination(HUB, "n") == 2
    predictor = DestinationPredictor("map", game_map)
    assert predictor.predict(HUB, "north") == 2
    assert predictor.predict(HUB, "look") is None


def test_map_predictor_treats_a_loop_back_exit_as_no_destination():
    game_map = MapGraph()
    game_map.rooms[HUB] = Room(HUB, "Hub", exits={"north": HUB, "south": 2})
    predictor = DestinationPredictor("map", game_map)
    assert predictor.predict(HUB, "north") is None  # stays in the room: not a move anywhere
    assert predictor.predict(HUB, "south") == 2


def test_lookahead_needs_a_session():
    with pytest.raises(ValueError):
        DestinationPredictor("lookahead", MapGraph())


# -- lookahead on the real story file -----------------------------------------------------------------------
def fresh(rom_path) -> JerichoSession:
    session = JerichoSession(rom_path, seed=SEED)
    session.reset()
    return session


def test_lookahead_predicts_north_from_west_of_house(rom_path):
    session = fresh(rom_path)
    start = session.observe()
    expected = fresh(rom_path).step("north")  # a separate game, stepped for real
    assert expected.room_id != start.room_id

    predictor = DestinationPredictor("lookahead", MapGraph(), session)
    assert predictor.predict(start.room_id, "north", start.world_hash) == expected.room_id
    assert predictor.predict(start.room_id, "n", start.world_hash) == expected.room_id
    assert predictor.predict(start.room_id, "examine mailbox", start.world_hash) is None  # stays put
    assert predictor.predict(start.room_id, "east", start.world_hash) is None  # the house blocks the way
    # The map mode knows nothing yet: only the lookahead can tell.
    assert DestinationPredictor("map", MapGraph()).predict(start.room_id, "north") is None


def test_lookahead_leaves_the_game_exactly_as_it_was(rom_path):
    session = fresh(rom_path)
    reference = fresh(rom_path)
    start = session.observe()
    predictor = DestinationPredictor("lookahead", MapGraph(), session)
    for command in ("north", "jump", "open mailbox", "take leaflet", "jump"):
        predictor.predict(start.room_id, command, start.world_hash)
        predictor.predict(start.room_id, command)  # without a world hash: no cache, another real lookahead
    after = session.observe()
    assert after == start  # room, score, moves, inventory, objects, world_hash, last response: all unchanged
    assert (after.world_hash, after.score, after.moves) == (start.world_hash, start.score, start.moves)

    # The next steps give the very same responses as in a game that never looked ahead: RNG included
    # ("jump" answers with a randomly picked phrase).
    script = ["jump"] * 6 + ["north", "open mailbox", "jump"]
    looked = [session.step(c) for c in script]
    plain = [reference.step(c) for c in script]
    assert [v.text for v in looked] == [v.text for v in plain]
    assert [(v.room_id, v.world_hash, v.score, v.moves) for v in looked] == [
        (v.room_id, v.world_hash, v.score, v.moves) for v in plain
    ]

    # Control: the script does depend on the RNG state, so the comparison above can fail.
    shifted = fresh(rom_path)
    shifted.step("jump")
    assert [shifted.step(c).text for c in script] != [v.text for v in plain]


def test_lookahead_of_quit_leaves_no_pending_question(rom_path):
    """Looking ahead at `quit` puts the game in its "Do you wish to leave?" prompt; restored, a following `y` is an
    ordinary (meaningless) command, as in a game that never looked ahead, and does not end the game."""
    session = fresh(rom_path)
    reference = fresh(rom_path)
    for command in ("north", "east", "open window", "west"):  # into the kitchen
        session.step(command)
        reference.step(command)
    before = session.observe()
    predictor = DestinationPredictor("lookahead", MapGraph(), session)
    assert predictor.predict(before.room_id, "quit", before.world_hash) is None
    assert session.observe() == before
    answered, plain = session.step("y"), reference.step("y")
    assert answered.text == plain.text and not answered.game_over
    assert session.step("look").text == reference.step("look").text
