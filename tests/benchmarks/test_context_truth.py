"""The auditor of what the agent is shown (benchmarks/context_truth.py). Its checks read the game's own answers from the
real emulator; the episode runs through the LLM path against the scripted server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.context_truth import (
    CATEGORIES,
    COVERAGE,
    DARK_CLAIM,
    Auditor,
    Description,
    audit_episode,
    check_carried_answer,
    check_carried_name,
    check_description,
    check_room,
    check_seen,
    future_lines,
    main,
    parse_prompt,
    play,
    squeeze,
)
from session.jericho_session import JerichoSession
from tests.helpers import PYPROJECT, ROOT, story_file

pytestmark = pytest.mark.usefixtures("no_proxy")  # the scripted server is on 127.0.0.1


def _answers(story: Path, commands: list[str], question: str) -> str:
    """The game's answer to `question` after `commands`."""
    session = JerichoSession(story)
    session.reset()
    for command in commands:
        session.step(command)
    return session.step(question).text


def _new_format(room: str, description: str, age: str, carried: str, seen: str, named: str) -> str:
    return "\n".join(
        [
            "TURN 1. Score 0 of 350. Moves 0.",
            f"WHERE YOU ARE: {room}",
            f"DESCRIPTION (printed {age}):",
            description,
            "",
            'YOU CARRY (the game\'s answer to "inventory"):',
            carried,
            "",
            f"SEEN HERE: {seen}.",
            "EXITS THAT WORKED FROM HERE: none yet.",
            f"EXITS THE TEXT MENTIONS, NOT VERIFIED: {named}.",
            "",
            "LAST COMMAND AND RESPONSE:",
            "> look",
            "You carry: a lie in the history, which is no claim.",
        ]
    )


def test_both_prompt_formats_are_read():
    old = parse_prompt(
        "TURN 30. Score 40, moves 29.\nWHERE YOU ARE: The Troll Room\nDescription (as last printed in full here):\n"
        "The Troll Room\nThis is a small room.\nYou can see: bloody axe.\nYou carry: sword, brass lantern.\n"
        "Exits that worked from here: east -> East-West Passage, south -> Dam Base, in the boat.\n"
        "Named in the description, not tried yet: south, west.\n"
    )
    assert (old.format, old.turn, old.room) == ("old", 30, "The Troll Room")
    assert old.description == "The Troll Room\nThis is a small room." and old.description_age is None
    assert old.carried == ("sword", "brass lantern") and old.seen == ("bloody axe",)
    assert old.worked == (("east", "East-West Passage"), ("south", "Dam Base, in the boat"))
    assert old.named == ("south", "west")
    new = parse_prompt(
        _new_format(
            "West of House",
            "West of House\nA field.",
            "3 turns ago",
            "You are empty-handed.",
            "small mailbox, leaflet",
            "north",
        )
    )
    assert (new.format, new.description, new.description_age) == ("new", "West of House\nA field.", 3)
    assert new.carried is None and new.carried_answer == "You are empty-handed."
    assert new.seen == ("small mailbox", "leaflet") and new.worked == () and new.named == ("north",)


def test_the_checks_read_the_games_own_answers(rom_path):
    look = _answers(rom_path, [], "look")  # West of House
    assert check_room("West of House", look, None).true
    assert check_room("west of house", look, None).true  # the case is the model's business
    assert check_room("Attic", look, None).true is False
    assert check_room(DARK_CLAIM, look, None).true is False
    dark = _answers(story_file("hhgg.z3"), [], "look")  # hhgg wakes the player in a pitch-black bedroom
    assert check_room(DARK_CLAIM, dark, None).true and check_room("Bedroom", dark, None).true is False
    # a title the game prints with what it appends still names the room
    assert check_room("Dam Base", "Dam Base, in the magic boat\nYou are at the base of the dam.", None).true

    inventory = _answers(rom_path, ["n", "n", "u", "get egg"], "inventory")
    assert check_carried_name("jewel-encrusted egg", inventory).true
    assert check_carried_name("nest", inventory).true is False
    assert check_carried_name("nothing", _answers(rom_path, [], "inventory")).true
    assert check_carried_answer(inventory, inventory).true
    assert check_carried_answer(inventory.strip()[:12] + " …", inventory).true  # cut, and said so
    assert check_carried_answer("You are empty-handed.", inventory).true is False

    printed = " ".join(_answers(rom_path, [], "look").lower().split())
    assert check_seen("small mailbox", printed, _answers(rom_path, [], "examine small mailbox")).true
    assert check_seen("leaflet", printed, _answers(rom_path, [], "examine leaflet")).true is False  # inside it
    assert check_seen("small mailbox", printed, "It is pitch black.", dark=True).true is False


def test_a_description_is_the_latest_printed_here_or_labelled_with_its_age():
    full = Description(2, ("Forest Path", "This is a path winding through a dimly lit forest."))
    brief = Description(5, ("Forest Path",))
    troll = Description(
        9, ("The Troll Room", "A nasty troll blocks the way.", "Your sword glows."), frozenset({"Your sword glows."})
    )
    block = "Forest Path\nThis is a path winding through a dimly lit forest."
    assert check_description(block, [full], None, 4).true
    stale = check_description(block, [full, brief], None, 7)
    assert stale.true is False and "stale" in stale.truth
    assert check_description(block, [full, brief], 4, 7).true  # printed at turn 2: the last response is 6's
    assert check_description(block, [full, brief], 3, 7).true is False
    assert check_description("Forest Path\nThis is a path winding …", [full], 0, 3).true
    event = check_description("The Troll Room\nA nasty troll blocks the way.\nYour sword glows.", [troll], None, 10)
    assert event.true is False and "passing event" in event.truth
    assert check_description("(none printed)", [], None, 1).true
    assert check_description("It was printed somewhere else.", [], None, 1).true is False


def test_a_new_format_prompt_is_checked_against_the_game(rom_path):
    auditor = Auditor(rom_path, seed=None)
    inventory = _answers(rom_path, [], "inventory")
    description = "West of House\nYou are standing in an open field west of a white house, with a boarded front door."
    true = _new_format("West of House", description, "this turn", inventory, "small mailbox", "north")
    assert all(f.true for f in auditor.audit(true))
    lies = _new_format("Attic", description, "2 turns ago", "You have a lamp.", "leaflet", "north")
    false = {f.category for f in auditor.audit(lies) if f.true is False}
    assert false == {"room", "description", "carried", "seen"}


def test_a_short_episode_is_audited_and_a_planted_lie_is_caught(rom_path, walkthrough, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    prompts, records, figures = play(rom_path, walkthrough[:30], PYPROJECT, tmp_path)
    assert figures["turns"] == 30 and sorted(prompts) == list(range(1, 31))
    audit = audit_episode(rom_path, prompts, records, seed=None)
    assert audit["desync_turns"] == [] and audit["prompts"] == 30
    assert all(audit["counts"][category]["checked"] for category in ("room", "carried", "description"))
    # turn 12: the Kitchen, lit. The prompt's room is true; planted, a wrong one is caught there and only there.
    assert not [c for c in audit["false_claims"] if c["turn"] == 12 and c["category"] == "room"]
    lines = prompts[12].splitlines()
    where = next(i for i, line in enumerate(lines) if line.startswith("WHERE YOU ARE: "))
    planted = {**prompts, 12: "\n".join(lines[:where] + ["WHERE YOU ARE: Attic"] + lines[where + 1 :])}
    caught = audit_episode(rom_path, planted, records, seed=None)["false_claims"]
    assert [(c["turn"], c["claim"]) for c in caught if c["category"] == "room" and c["turn"] == 12] == [(12, "Attic")]
    # what a prompt should show, it shows: the room, the inventory, a current description, the way back
    for category in ("room_named", "inventory_shown", "description_fresh", "way_back"):
        assert audit["counts"][category]["checked"] and not audit["counts"][category]["false"], category
    assert audit["counts"]["future_text"]["checked"] and not audit["counts"]["future_text"]["false"]


def test_the_clock_s_next_words_in_a_prompt_are_future_text():
    """A line a turn-taking idle command prints after its own answer (the clock's), never printed before, is the
    next turn's: shown in a prompt, it is future text; the idle command's own answer is not."""
    idle = "Time passes.\n\nPig look spooked. It run off to northwest all of a sudden."
    block = "Grunk have:\n  torch\nPig look spooked. It run off to northwest all of a sudden."
    assert future_lines(block, idle, printed=set()) == ["Pig look spooked. It run off to northwest all of a sudden."]
    assert (
        future_lines(block, idle, printed={squeeze("Pig look spooked. It run off to northwest all of a sudden.")}) == []
    )
    assert future_lines("Time passes.", idle, printed=set()) == []


@pytest.mark.parametrize(
    "arguments",
    [["--kinds", "optimal,perfect"], ["--game", "zork9"], ["--turns", "0"], ["--games", "/nonexistent"]],
)
def test_bad_input_is_one_error_line(arguments, rom_path, capsys):
    assert main(["--games", str(rom_path.parent), *arguments]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")


def test_the_pages_quote_the_audit_rows_of_its_results_file():
    """The README and docs/ quote the audit's false claims and coverage per category as context_truth.json holds
    them, in the order of the auditor's categories."""
    pages = "\n".join(page.read_text() for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
    totals = json.loads((ROOT / "docs" / "results" / "context_truth.json").read_text())["totals"]
    for kind in ("optimal", "noisy"):
        counts = totals[kind]["counts"]
        cells = [f"**{counts[c]['false']}** / {counts[c]['checked']:,}" for c in CATEGORIES]
        covered = [
            f"{(counts[c]['checked'] - counts[c]['false']) / counts[c]['checked']:.1%} of {counts[c]['checked']:,}"
            for c in COVERAGE
        ]
        exits = totals[kind]["suggested_exits"]
        share = f"{round(100 * exits['lead_somewhere'] / exits['shown'])} %"
        row = " | ".join(cells) + f" | {share} | " + " | ".join(covered) + " |"
        assert f"({totals[kind]['turns']:,} turns) | " + row in pages, kind
