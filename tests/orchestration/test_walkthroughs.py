"""Every game's walkthrough as `main.py --agent walkthrough` plays it (the wiring, the default configuration, the
offline critic): it plays to its last step, the loop break stops none and warns none, and it reaches plain
Jericho's final score. The corpus's 29 games and five more of Jericho's suite that rules chosen on the corpus once
stopped (adventureland, curses and trinity by the churn rule) or crashed (hollywood: a `look` after its walkthrough's
`GET PILLAR` crashes Jericho's C core, and the harness plays one on its shadow emulator)."""

from __future__ import annotations

import pytest

from orchestration.wiring import RunOptions, build_orchestrator
from playthroughs.trajectories import clean_outcomes
from session.jericho_session import JerichoSession
from session.records import LOOP_ENDINGS
from tests.helpers import CORPUS, MORE_GAMES, make_config, more_story_file, read_episode, story_file

pytestmark = pytest.mark.slow  # every game's walkthrough


@pytest.mark.parametrize("name", [n for n in CORPUS + MORE_GAMES if n != "lgop.z3"])  # lgop has no walkthrough
def test_the_walkthrough_plays_to_its_last_step_with_jerichos_score(name, tmp_path):
    story = story_file(name) if name in CORPUS else more_story_file(name)
    commands = JerichoSession(story).walkthrough()
    config = make_config(
        tmp_path, gameplay={"agent": "walkthrough", "critic": "offline", "max_turns_per_episode": 5000}
    )
    orchestrator = build_orchestrator(config, RunOptions(rom=str(story), quiet=True))
    played = read_episode(orchestrator.play_episode(), orchestrator)
    assert len(played.records) == len(commands), played.summary["termination_reason"]
    assert played.summary["termination_reason"] not in LOOP_ENDINGS
    assert played.events("loop_break_warning") == []
    assert played.summary["final_score"] == clean_outcomes(story, commands)[-1].score
