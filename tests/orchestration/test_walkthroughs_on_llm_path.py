"""The gates let a good player through. Every game's walkthrough (the corpus and five more) is played through
`_run_game_loop` on the LLM path, as `main.py --agent llm --critic llm` plays: the real `openai` client over HTTP
to a scripted server on 127.0.0.1 whose model answers every turn with the walkthrough's next step as JSON, and
proposes it again when it is turned down (agents.scripted_llm.WalkthroughModel). Every step must run as written
(none refused by the pre-check, the reply parser or the loop break, none replaced by a fallback), the loop break
must stop none, and the episode must reach plain Jericho's final score for the same walkthrough."""

from __future__ import annotations

import pytest

from playthroughs.llm_path import notes_to_the_reader, play, walkthrough_check
from playthroughs.scenarios import ScenarioError
from playthroughs.trajectories import clean_outcomes
from session.commands import normalize_command
from session.jericho_session import JerichoSession
from session.records import LOOP_ENDINGS
from tests.helpers import CORPUS, MORE_GAMES, PYPROJECT, more_story_file, story_file

pytestmark = [
    pytest.mark.slow,  # every corpus game's walkthrough through the LLM path
    pytest.mark.usefixtures("no_proxy"),  # the scripted server is on 127.0.0.1
]


def not_run_as_written(commands: list[str], records: list[dict], notes: set[int] = frozenset()) -> list:
    """(turn, step, what ran instead) for every walkthrough step that did not run as written; a step of `notes`
    (a note to the reader, no command) may instead run nothing, never another command."""
    return [
        (r["turn"], commands[r["turn"] - 1], r["command"] if r["ran"] else "(nothing ran)")
        for r in records
        if not (r["ran"] and normalize_command(r["command"]) == normalize_command(commands[r["turn"] - 1]))
        and not (r["turn"] in notes and not r["ran"])
    ]


@pytest.mark.parametrize("name", CORPUS + MORE_GAMES)
def test_the_walkthrough_through_the_llm_path_runs_every_step_and_reaches_jerichos_score(name, tmp_path):
    story = story_file(name) if name in CORPUS else more_story_file(name)
    commands = JerichoSession(story).walkthrough()
    if not commands:  # lgop: Jericho has no walkthrough for it, so there is no perfect player to let through
        with pytest.raises(ScenarioError, match="no Jericho walkthrough"):
            walkthrough_check(story, PYPROJECT, tmp_path)
        return
    summary, records, _ = play(story, commands, PYPROJECT, tmp_path)
    notes = notes_to_the_reader(story, commands) if not all(r["ran"] for r in records) else frozenset()
    assert not_run_as_written(commands, records, notes) == []
    assert len(records) == len(commands) and summary["termination_reason"] not in LOOP_ENDINGS
    assert summary["final_score"] == clean_outcomes(story, commands)[-1].score


@pytest.mark.parametrize("name, step", [("zork2.z5", 'answer "a well"'), ("hhgg.z3", 'type "bleem"')])
def test_a_quoted_answer_reaches_the_game_through_the_llm_path(name, step, tmp_path):
    """Zork II's riddle and hhgg's `type "bleem"`: the model's command, quotes and all, reaches the game, which
    answers it exactly as plain Jericho does at that point of the walkthrough."""
    story = story_file(name)
    commands = JerichoSession(story).walkthrough()
    steps = [normalize_command(command) for command in commands].index(step) + 1
    summary, records, _ = play(story, commands[:steps], PYPROJECT, tmp_path)
    assert not_run_as_written(commands, records) == []
    plain = JerichoSession(story)
    plain.reset()
    for command in commands[:steps]:
        answer = plain.step(command).text
    assert records[-1]["response"] == answer
