"""The object pre-check refuses only what the game itself refuses as out of sight or unknown, changing nothing; it
plays the command on the shadow emulator and quotes the game's answer. Real story files of the corpus."""

from __future__ import annotations

import os

import pytest

from agents.precheck import ObjectPrecheck
from session.commands import CommandRefused, normalize_command
from session.jericho_session import JerichoSession
from tests.helpers import story_file


def after_steps(name: str, steps: int) -> JerichoSession:
    """A session of the story file after the first `steps` steps of its walkthrough."""
    session = JerichoSession(story_file(name))
    session.reset()
    for command in session.walkthrough()[:steps]:
        session.step(command)
    return session


def before_step(name: str, step: str) -> JerichoSession:
    """A session of the story file just before the walkthrough's first `step`."""
    commands = [normalize_command(c) for c in JerichoSession(story_file(name)).walkthrough()]
    return after_steps(name, commands.index(normalize_command(step)))


@pytest.mark.parametrize(
    "name, step",
    [
        ("spirit.z5", "push west wall"),  # opens a secret door: the wall is scenery no object table names
        ("sherlock.z5", "show ruby to pigeon"),
        ("lostpig.z8", "drop all bricks"),  # a plural
        ("partyfoul.z8", "take jar"),
        ("weapon.z5", "x information stud"),
        ("zork3.z5", "dungeon master, turn dial to 8 and press button"),  # an order to a character
    ],
)
def test_walkthrough_steps_the_object_table_could_not_place_pass(name, step):
    """Steps a pre-check that guessed presence from the words of the object table would refuse: the game takes them."""
    session = before_step(name, step)
    assert ObjectPrecheck(session).check(step) is None


def test_an_object_out_of_sight_is_refused_with_the_games_own_answer(rom_path):
    session = JerichoSession(rom_path)
    session.reset()
    for command in ("open mailbox", "take leaflet"):
        session.step(command)
    precheck = ObjectPrecheck(session)
    judgement = precheck.check("take lamp")
    assert (judgement.score, judgement.source) == (0.0, "precheck")
    assert judgement.reason == 'the game answers: "You can\'t see any lamp here!"'
    assert precheck.check("take flurbo").reason == 'the game answers: "I don\'t know the word "flurbo"."'
    assert precheck.check("read leaflet") is None  # held: the game reads it


def test_the_game_itself_is_never_touched(rom_path):
    session = JerichoSession(rom_path)
    session.reset()
    session.step("open mailbox")
    before = session.observe()
    for command in ("take lamp", "take leaflet", "north", "xyzzy"):
        ObjectPrecheck(session).check(command)
    assert session.observe() == before
    assert session.step("take leaflet").inventory != before.inventory  # the leaflet is still there to take


def test_a_command_that_changes_something_passes_whatever_the_answer_says():
    """`down then take lamp`: the game climbs down the tree, then says it cannot see the lamp. (`take lamp then
    down` is refused as a whole: the parser drops the rest of a line it could not read, as the game would.)"""
    session = after_steps("zork1.z5", 4)  # up a tree, the egg in hand
    precheck = ObjectPrecheck(session)
    assert precheck.check("take lamp") is not None
    assert precheck.check("down then take lamp") is None
    assert precheck.check("take lamp then down") is not None


def test_the_marks_a_parser_leaves_are_no_change():
    """Gold's parser marks the objects it weighed, even for a word it cannot place: what the same verb with a word
    no game knows leaves is no change the command made."""
    session = after_steps("gold.z5", 40)  # the cheese is elsewhere
    precheck = ObjectPrecheck(session)
    assert "can't see any such thing" in precheck.check("take cheese").reason
    assert precheck.check(f"take {precheck.nonsense}") is not None


def test_interpreter_commands_never_reach_the_shadow(rom_path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    session = JerichoSession(rom_path)
    session.reset()
    assert ObjectPrecheck(session).check("save") is None  # refused before, by the orchestrator, with its own reason
    with pytest.raises(CommandRefused):
        session.trial("save")
    with pytest.raises(CommandRefused):
        session.trial("take lamp", refused="restore")
    assert os.listdir(tmp_path) == []  # no save file written
