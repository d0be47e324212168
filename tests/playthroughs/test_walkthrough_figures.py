"""How a perfect player fared on the LLM path (playthroughs.llm_path.walkthrough_figures): a step that is a note to
the reader, found on the real story file, may run nothing without counting as refused; any other step may not."""

from __future__ import annotations

from playthroughs.llm_path import notes_to_the_reader, walkthrough_figures
from session.jericho_session import JerichoSession
from tests.helpers import more_story_file


def record(turn: int, command: str, ran: bool = True, blocked_by: str | None = None) -> dict:
    candidates = [{"source": blocked_by, "accepted": False, "reason": "blocked"}] if blocked_by else []
    return {"turn": turn, "command": command, "ran": ran, "candidates": candidates, "parse_failures": []}


def test_curses_note_to_the_reader_is_found_on_the_story_file():
    story = more_story_file("curses.z5")
    commands = JerichoSession(story).walkthrough()
    notes = notes_to_the_reader(story, commands)
    bracketed = commands.index('[ Repeatedly "turn sceptre" until the coffin opens ]') + 1
    assert bracketed in notes
    assert all(not commands[turn - 1] or commands[turn - 1].startswith("[") for turn in notes)  # or a blank step


def test_a_note_that_ran_nothing_is_no_refused_step_and_any_other_step_is():
    commands = ["open door", "[ wait for the door ]", "north"]
    records = [record(1, "open door"), record(2, "", ran=False), record(3, "look", ran=False, blocked_by="ban")]
    summary = {"termination_reason": "victory", "turns": 3}
    figures = walkthrough_figures(commands, records, summary, notes=frozenset({2}))
    assert figures["refused_steps"] == 1 and figures["refused"] == {"ban": 1} and figures["notes_not_sent"] == 1
    assert walkthrough_figures(commands, records, summary)["refused_steps"] == 2
