"""Result categories on real zork1 responses: the phrase lists in session/outcomes.py are checked here."""

from __future__ import annotations

import pytest

from agents.replay_agent import ReplayAgent
from session.outcomes import PROBLEMATIC, classify_outcome
from tests.conftest import make_config, run_episode

# (command, expected category), played in order from the start of zork1 at West of House.
SCRIPT = [
    ("frobnicate lamp", "parser_failure"),  # I don't know the word "frobnicate".
    ("north north", "parser_failure"),  # You used the word "north" in a way that I don't understand.
    ("take", "parser_failure"),  # What do you want to take?
    ("east", "blocked_exit"),  # The door is boarded and you can't remove the boards.
    ("take lamp", "refused"),  # You can't see any lamp here!
    ("take mailbox", "refused"),  # It is securely anchored.
    ("push mailbox", "refused"),  # Pushing the small mailbox doesn't seem to work.
    ("open mailbox", "success"),  # Opening the small mailbox reveals a leaflet.
    ("open mailbox", "refused"),  # It is already open.
    ("examine mailbox", "no_effect"),  # The small mailbox contains: A leaflet
    ("look", "no_effect"),
    ("take leaflet", "success"),
    ("drop leaflet", "success"),
    ("drop leaflet", "refused"),  # You don't have the leaflet.
    ("north", "success"),
]


@pytest.fixture(scope="module")
def played(rom_path, tmp_path_factory):
    config = make_config(tmp_path_factory.mktemp("outcomes"), loop_break={"enable_velocity_detection": False})
    return run_episode(rom_path, config, ReplayAgent([command for command, _ in SCRIPT]))


@pytest.mark.parametrize("index", range(len(SCRIPT)))
def test_categories_on_real_responses(played, index):
    command, expected = SCRIPT[index]
    record = played.records[index]
    assert record["command"] == command
    assert record["result_category"] == expected, record["response"]


def test_death_is_read_from_the_machine_first():
    assert classify_outcome("attack troll", "The troll neatly removes your head.", False, False, False, True,
                            game_over=True, victory=False) == "death"  # fmt: skip


def test_a_move_that_moved_is_success_even_with_refusal_words():
    assert classify_outcome("north", "You can't see the path... North of House", True, False, False, True,
                            game_over=False, victory=False) == "success"  # fmt: skip


def test_success_is_never_problematic():
    assert "success" not in PROBLEMATIC
