"""benchmarks.progress: a game's walkthrough reaches all its checkpoints through the wiring, the random player's
commands are seeded and runnable, and the learning curves and a run's table show progress beside the score."""

from __future__ import annotations

import random

import main
from benchmarks import learning
from benchmarks.progress import markdown, measure_game, random_commands
from session.commands import DIRECTIONS, why_not_run
from session.jericho_session import JerichoSession
from tests.helpers import PYPROJECT, story_file


def test_the_random_players_commands_are_seeded_runnable_words_of_the_game(rom_path):
    session = JerichoSession(rom_path)
    try:
        words = session.dictionary()
    finally:
        session.close()
    first = random_commands(words, random.Random("zork1:1"), 100)
    assert first == random_commands(words, random.Random("zork1:1"), 100)
    assert first != random_commands(words, random.Random("zork1:2"), 100)
    known = {w.word for w in words} | set(DIRECTIONS)
    assert len(first) == 100 and all(why_not_run(c) is None for c in first)
    assert all(word in known for c in first for word in c.split())


def test_a_walkthrough_reaches_all_its_checkpoints_and_a_random_player_some(tmp_path):
    """night: a short walkthrough (90 steps) with rooms and points."""
    job = {"story": str(story_file("night.z5")), "config": str(PYPROJECT), "random_seeds": [1], "random_steps": 20}
    row = measure_game(job)
    assert row["walkthrough"]["progress"] == 1.0
    assert row["walkthrough"]["checkpoints"]["total"] == row["rooms"] + row["scores"] > 0
    [played] = row["random"]
    assert played["turns"] <= 20 and 0.0 <= played["progress"] < 1.0
    table = markdown([row])
    assert table[2].startswith("| night | 90 | ") and "| 100.0 % |" in table[2]


def test_a_game_without_a_walkthrough_is_measured_as_none():
    job = {"story": str(story_file("lgop.z3")), "config": str(PYPROJECT), "random_seeds": [1], "random_steps": 5}
    row = measure_game(job)
    assert row["walkthrough_steps"] == 0 and row["walkthrough"] is None and row["random"] == []
    assert markdown([row])[2].startswith("| lgop | none | 0 (0 + 0) | - | - | - | - |")


def test_the_learning_table_shows_progress_of_the_first_and_last_episode():
    episode = {"best_score": 0, "turns": 10, "termination_reason": "max_turns", "turns_to_first_best": None}
    games = [
        {"game": "zork1", "max_score": 350, "episodes": [episode | {"progress": 0.05}, episode | {"progress": 0.2}]},
        {"game": "lgop", "max_score": 0, "episodes": [episode | {"progress": None}, episode | {"progress": None}]},
    ]
    lines = learning.markdown(games, 2).splitlines()
    assert lines[0].endswith("| turns to ep 1's best: ep 1 → last | progress: ep 1 → last |")
    assert lines[2] == "| zork1 | 350 | 0 | 0 | - | 5 % → 20 % |"
    assert lines[3] == "| lgop | 0 | 0 | 0 | - | - |"
    assert lines[4].endswith("| **5 % → 20 %** |")


def test_a_runs_table_has_progress_beside_the_best_score(tmp_path):
    summaries = [
        {"episode_id": f"e{n}", "game": "zork1", "final_score": 0, "best_score": 0, "progress": share, "turns": 100}
        for n, share in ((1, 0.05), (2, 0.125))
    ]
    main.write_run(tmp_path, summaries)
    table = (tmp_path / "runs" / "e1" / "run.md").read_text().splitlines()
    assert "| best_score | progress | turns |" in table[2]
    assert table[4].startswith("| 1 | e1 | 0 | 0 | 0.05 | 100 |")
