"""Reading a game Jericho has no bindings for (session.status): the score, its maximum, the room, the player and the
endings from what every Z-machine game shows a player, checked against Jericho's bindings on unbound copies of the
corpus games (a changed checksum byte is enough for Jericho not to know a story file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from session.jericho_session import JerichoSession
from session.status import (
    ScoreReading,
    closing_question,
    full_score,
    read_ending,
    read_score_answer,
    status_globals,
    without_status_line,
)
from tests.helpers import CORPUS, MORE_GAMES, more_story_file, story_file

CHECKSUM_LOW_BYTE = 0x1D
"""Part of the header word that only the `verify` opcode reads: flipping it leaves the game as it was."""


def unbound_copy(path: Path, folder: Path) -> Path:
    """A copy of `path` Jericho has no bindings for (its md5 differs), the same game to play."""
    data = bytearray(path.read_bytes())
    data[CHECKSUM_LOW_BYTE] ^= 0xFF
    copy = folder / f"unbound-{path.name}"
    copy.write_bytes(bytes(data))
    return copy


@pytest.mark.parametrize(
    ("answer", "reading"),
    [
        ("You have so far scored 6 out of a possible 300, in 4 turns, \nSorry Excuse", ScoreReading(6, 300, 4)),
        ("Your score is 284 (total of 350 points), in 339 moves.", ScoreReading(284, 350, 339)),
        ("Your potential is 0 of a possible 7, in 3 moves.", ScoreReading(0, 7, 3)),
        ("Grunk have 0 out of 7 so far.", ScoreReading(0, 7)),
        ("If you quit now you will have scored 10 points out of\na maximum of 250", ScoreReading(10, 250)),
        ("[You have 0 out of 100 points, which earns you a ranking of", ScoreReading(0, 100)),
        ("Your score is 12.", ScoreReading(12)),
        ("There is no score in this story.", None),
        ("There is no scoring in this game, only winning and losing.", None),
    ],
)
def test_the_games_answers_to_score(answer, reading):
    assert read_score_answer(answer) == reading


@pytest.mark.parametrize(
    ("text", "ending"),
    [
        ("You fall.\n\n    *** You have died ***\n\nWould you like to RESTART, RESTORE or QUIT?", (True, False)),
        ("\n                *** You lost! ***\n\nYou scored 0 out of a possible 3.", (True, False)),
        ("\n    *** The End ***\n\nYou scored 1 out of a possible 1, in 4 turns.\n", (False, True)),
        ("Grunk go to bed.\n\n    ***  Grunk bring pig back to farm  ***\n\nGrunk have 6 out of 7.", (False, True)),
        ("Would you like to RESTART, RESTORE a saved game or QUIT?", (True, False)),
        ("It was you.\n(Type RESTORE, RESTART, or QUIT.)", (True, False)),
        ("You can SAVE, RESTORE, RESTART or QUIT at any time.\nWhat next?", (False, False)),
        ('"*** ALURT! ***" reads the printout', (False, False)),
        ("West of House\nYou are standing in an open field.", (False, False)),
    ],
)
def test_endings_as_the_answer_says_them(text, ending):
    assert read_ending(text) == ending


def test_the_closing_question_alone_is_a_victory_at_the_full_score():
    question = "\nWould you like to RESTART, RESTORE a saved game or QUIT?"
    assert read_ending(question, score=30, max_score=30) == (False, True)
    assert read_ending(question, score=29, max_score=30) == (True, False)
    assert closing_question("Do you wish to: (1) Quit, (2) Restart, (3) Restore, (4) Hints, (5) Undo ?\n")


def test_a_full_score_announced_is_called_a_score():
    assert full_score("Your score is 350 (total of 350 points), in 394 moves.\nThis gives you the rank of Master")
    assert not full_score("Your score is 284 (total of 350 points), in 339 moves.")
    assert full_score("Your potential is 7 of a possible 7, in 380 moves.\n\n")
    assert not full_score("You have visited 3 out of 3 rooms.")
    assert not full_score("[Your score just went up by 5 points. The total is now 100 out of 100.]\n\nYou slide")


def test_status_line_globals_of_versions_1_to_3():
    zork1 = story_file("zork1.z5").read_bytes()
    assert status_globals(zork1, (0xFFFF, 12)) == (-1, 12)  # signed: Standard 8.2.3.1
    assert status_globals(story_file("wishbringer.z3").read_bytes(), (15, 2)) is None  # a time game
    assert status_globals(story_file("lostpig.z8").read_bytes(), (0, 2)) is None  # the game draws its own


def test_the_prompt_and_status_lines_are_cut_from_an_unbound_answer():
    v3 = "> West of House        Score: 0        Moves: 0      \nNorth of House\nYou are facing the north side.\n\n"
    assert without_status_line(v3, 3) == "North of House\nYou are facing the north side.\n\n"
    v8 = "\nGrunk orc. Big and green.\n\n>" + " " * 120 + "OutsideScore: 0"
    assert without_status_line(v8, 8) == "\nGrunk orc. Big and green.\n"
    two_lines = "\nThere is something shiny here.\n\n>" + " " * 60 + "Spoon in the Road\nScore: 105Moves: 237"
    assert without_status_line(two_lines, 5) == "\nThere is something shiny here.\n"
    assert (
        without_status_line(">\nYour wristwatch says it's 3:30:00 pm.\n\n", 4)
        == "Your wristwatch says it's 3:30:00 pm.\n\n"
    )


@pytest.mark.slow  # every corpus game
def test_an_unbound_copy_reads_as_jericho_reads_the_original(tmp_path):
    """zork1 (version 3: the status line's globals) and lostpig (version 8: answers to `score`, a player found by
    the drop it makes), step by step from the same state along the walkthrough."""
    for name in ("zork1.z5", "lostpig.z8"):
        mismatches = agreement(story_file(name), tmp_path)
        assert mismatches == {"score": [], "room": [], "inventory": [], "ending": []}, name


@pytest.mark.slow  # every walkthrough of the corpus and the five more games, twice
@pytest.mark.parametrize("name", [n for n in CORPUS + MORE_GAMES if n != "lgop.z3"])  # lgop has no walkthrough
def test_every_game_reads_without_bindings_as_with_them(name, tmp_path):
    """Score at every step, the room from the player's first walk on, the player object, and victory at the end,
    where Jericho's bindings read one. Differences are the game's own words against a binding's choice."""
    path = story_file(name) if name in CORPUS else more_story_file(name)
    mismatches = agreement(path, tmp_path)
    expected: dict[str, object] = {"score": [], "room": [], "inventory": [], "ending": []}
    if name == "murdac.z5":  # it answers `score` with what quitting now would score, treasures held counted
        expected["score"] = mismatches["score"]
    if name in ("partyfoul.z8", "weapon.z5"):  # "There is no score in this story": the binding counts the win as 1
        expected["score"] = mismatches["score"]
        assert len(mismatches["score"]) == 1
    if name == "deephome.z5":  # won at 300 of 300 and asked to RESTART: the binding reads no victory
        expected["ending"] = [(327, True, False, False, True)]
    assert mismatches == expected


def agreement(path: Path, folder: Path) -> dict[str, list]:
    """What an unbound copy's session reads differently from the bound original's, each walkthrough step played
    from the original's state (the copy's opening may differ: Jericho plays a bound game's intro for it)."""
    bound = JerichoSession(path)
    unbound = JerichoSession(unbound_copy(path, folder))
    bound.reset()
    unbound.reset()
    flip = int(unbound.env._get_ram()[CHECKSUM_LOW_BYTE]) ^ int(bound.env._get_ram()[CHECKSUM_LOW_BYTE])
    mismatches: dict[str, list] = {"score": [], "room": [], "inventory": [], "ending": []}
    walkthrough = bound.walkthrough()
    for step, command in enumerate(walkthrough, start=1):
        state = list(bound.env.get_state())
        state[0] = state[0].copy()
        state[0][CHECKSUM_LOW_BYTE] ^= flip
        unbound.env.set_state(tuple(state))
        original, copy = bound.step(command), unbound.step(command)
        if original.score != copy.score:
            mismatches["score"].append(copy.score - original.score)
        if unbound.player and (original.room_id, original.inventory) != (copy.room_id, copy.inventory):
            mismatches["room" if original.room_id != copy.room_id else "inventory"].append(step)
        if original.victory != copy.victory or (original.game_over and not original.victory) != copy.game_over:
            mismatches["ending"].append((step, original.game_over, original.victory, copy.game_over, copy.victory))
        if original.game_over or original.victory:
            break
    assert unbound.player == bound.player
    return mismatches


@pytest.mark.slow  # TextWorld compiles the game (tw-make)
def test_a_one_room_game_whose_player_never_walks_finds_its_player_and_room(tmp_path):
    """A TextWorld cooking game of one room: the player never walks and no object has a name, so only the first
    thing moved shows which object the player is (`drop all` on the shadow empties it into the room). From then on
    the room is read, titled as the opening printed it, and nothing is left unreadable."""
    from playthroughs.generated_games import make

    game = make("cooking", 17786, 0, tmp_path)  # the smallest cooking size: one room
    assert game is not None, "TextWorld made no game"
    session = JerichoSession(Path(game.path))
    opening = session.reset()
    assert (session.player, opening.room_id) == (0, None)  # nothing has moved yet: no way to tell
    views = [session.step(command) for command in session.walkthrough()]
    assert session.player and {v.room_id for v in views} - {None} == {views[-1].room_id}
    assert views[-1].room_name == "Kitchen" and "-= Kitchen =-" in opening.text  # the title it printed
    assert views[-1].victory and views[-1].score == game.max_score and session.unreadable() == []
