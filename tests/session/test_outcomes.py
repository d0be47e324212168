"""Result categories on real zork1 responses, and the corpus games' answers for an object not in sight or an unknown
word: the phrase lists in session/outcomes.py are checked here."""

from __future__ import annotations

import pytest

from agents.replay_agent import ReplayAgent
from session.outcomes import PROBLEMATIC, classify_outcome, not_here, parser_noted, unknown_word, without_parser_notes
from tests.helpers import make_config, run_episode

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
    config = make_config(tmp_path_factory.mktemp("outcomes"), loop_break={"enabled": False})
    return run_episode(rom_path, config, ReplayAgent([command for command, _ in SCRIPT]))


@pytest.mark.parametrize("index", range(len(SCRIPT)))
def test_categories_on_real_responses(played, index):
    command, expected = SCRIPT[index]
    record = played.records[index]
    assert record["command"] == command
    assert record["result_category"] == expected, record["response"]


def test_death_is_read_from_the_machine_first():
    assert (
        classify_outcome(
            "attack troll",
            "The troll neatly removes your head.",
            False,
            False,
            False,
            True,
            game_over=True,
            victory=False,
        )
        == "death"
    )


def test_a_move_that_moved_is_success_even_with_refusal_words():
    assert (
        classify_outcome(
            "north",
            "You can't see the path... North of House",
            True,
            False,
            False,
            True,
            game_over=False,
            victory=False,
        )
        == "success"
    )


def test_success_is_never_problematic():
    assert "success" not in PROBLEMATIC


@pytest.mark.parametrize(
    "answer",
    [
        "You can't see any lamp here!",
        "You can't see any such thing.",
        "I can't see any such thing.",
        "[You can't see Billy here.]",
        "You can't see the viewport here.",
        "You can't see that here!",
        "> You cannot see any blue paper here.",
        "I don't see that around here",
        "Grunk not see that there.",
    ],
)
def test_answers_that_say_the_object_is_not_in_sight(answer):
    """The corpus games' ways of saying it (Infocom, Inform, and games with a voice of their own)."""
    assert not_here(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "He's had you cornered here, but you can't seem to get away, no matter how hard you try.",
        "It is a big and heavy wooden chest. You can't see inside, since it is closed.",
        "It is pitch dark, and you can't see a thing.",
        "You see nothing special about the ceiling.",
    ],
)
def test_a_bare_cant_see_is_no_answer_about_the_object(answer):
    assert not not_here(answer)


@pytest.mark.parametrize(
    "answer",
    [
        'I don\'t know the word "qzxjw".',
        "I don't know the word 'qzxjw'.",
        "That's not a verb I recognise.",
        "That's not a verb I recognize.",
        '(This story doesn\'t know the word "qzxjw.")',
        '(Sorry, but this story doesn\'t recognize the word "qzxjw.")',
        'I can\'t use the word "qzxjw" here.',
        '(Sorry, but the word "qzxjw" is not in the vocabulary that you can use while playing this story.)',
        '(You don\'t need to use the word "qzxjw" to finish this story.)',
    ],
)
def test_answers_that_say_a_word_is_unknown(answer):
    assert unknown_word(answer) and not unknown_word("You can't see any lamp here!")


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("\n(the white onion)\nYou find nothing of interest.\n", "You find nothing of interest.\n"),
        ("(first taking the brass lantern)\n(with the key)\nDone.", "Done."),
        ("(yourself)\nYou don't get much from that.", "You don't get much from that."),
        ("You see (or think you see) a shape.", "You see (or think you see) a shape."),
        ("(Taken)", "(Taken)"),
    ],
)
def test_the_parsers_notes_on_how_it_read_a_command_are_no_answer(response, answer):
    """Inform's parser says on a line of its own which thing it chose for a word several things share, or what it
    took for granted; the game's answer is what follows. Brackets inside the answer, or an answer that is nothing
    but one bracketed line, stay."""
    assert without_parser_notes(response) == answer
    assert parser_noted(response) == (answer != response)
