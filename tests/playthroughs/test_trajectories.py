"""The stuck kinds of playthroughs.trajectories on games whose object table names nothing at hand (TextWorld's): the
builders take their nouns from what the game printed, and a game of one room is cut where asked."""

from __future__ import annotations

import pytest

from playthroughs import trajectories
from session.jericho_session import JerichoSession

pytestmark = pytest.mark.slow  # TextWorld compiles the games (tw-make), and the builders try many commands


def test_in_room_loops_name_things_as_the_game_printed_them(textworld_kitchen):
    built = trajectories.stuck(textworld_kitchen, "camping", 0.25)
    assert built is not None, "no camping loop: the builders found no nouns"
    session = JerichoSession(textworld_kitchen)
    session.reset()
    views = [session.step(command) for command in built.commands[: built.prefix_turns]]
    assert not views[-1].room_objects, "TextWorld's things were expected to have no names"
    printed = session.step("look").text.lower() + session.step("inventory").text.lower()
    examined = [c.split()[-1] for c in built.commands[built.prefix_turns :][:4] if c.startswith("examine ")]
    assert examined and all(noun in printed for noun in examined)


def test_a_one_room_game_is_cut_where_asked(textworld_one_room):
    steps = len(JerichoSession(textworld_one_room).walkthrough())
    for kind in ("camping", "busy_camping", "inventory_juggling"):
        built = trajectories.stuck(textworld_one_room, kind, 0.5)
        assert built is not None, kind
        assert built.prefix_turns == int(steps * 0.5)
