"""Walkthrough progress (session.checkpoints): the checkpoints read off a game's walkthrough, and the share of them an
episode reached, on zork1's real walkthrough, on crafted maps and scores, and on a game without a walkthrough."""

from __future__ import annotations

import pytest

from agents.replay_agent import ReplayAgent
from session.checkpoints import Checkpoint, CheckpointKind, Checkpoints, Progress, checkpoints_for, derive
from session.jericho_session import JerichoSession
from tests.helpers import make_config, run_episode, story_file

ROOM, SCORE = CheckpointKind.ROOM, CheckpointKind.SCORE


@pytest.fixture(scope="module")
def zork1(rom_path) -> Checkpoints:
    return derive(rom_path)


def test_zork1s_walkthrough_gives_rooms_and_scores_in_the_order_it_reached_them(zork1, rom_path, walkthrough):
    rooms = [c for c in zork1.checkpoints if c.kind is ROOM]
    scores = [c for c in zork1.checkpoints if c.kind is SCORE]
    assert zork1.walkthrough_steps == len(walkthrough) and zork1.steps_played == len(walkthrough)
    assert len(rooms) > 50 and len(set(c.value for c in rooms)) == len(rooms)
    assert [c.value for c in scores] == sorted(c.value for c in scores) and scores[-1].value == 350
    assert [c.step for c in zork1.checkpoints] == sorted(c.step for c in zork1.checkpoints)
    assert rooms[0].name == "North of House" and scores[0].name == f"score {scores[0].value}"


def test_the_first_room_is_no_checkpoint(zork1, rom_path):
    """Every episode starts there: it would count for a player that never moved."""
    session = JerichoSession(rom_path)
    try:
        start = session.reset().room_id
    finally:
        session.close()
    assert start not in zork1.rooms
    assert zork1.progress([start], 0) == Progress(0, len(zork1.checkpoints))


def test_deriving_again_gives_the_same_checkpoints(zork1, rom_path):
    assert derive(rom_path) == zork1


def test_checkpoints_are_derived_once_per_story_file(rom_path):
    session = JerichoSession(rom_path)
    try:
        first = checkpoints_for(session)
        assert checkpoints_for(session) is first
    finally:
        session.close()


def test_an_episode_under_another_seed_is_measured_against_the_walkthroughs_own_checkpoints(tmp_path):
    """Planetfall's walkthrough dies at once under seed 1; an episode played under seed 1 still has every
    checkpoint of the walkthrough under its own seed to reach."""
    session = JerichoSession(story_file("planetfall.z3"), seed=1)
    try:
        assert checkpoints_for(session) == derive(story_file("planetfall.z3"))
        assert len(derive(story_file("planetfall.z3"), 1).checkpoints) < len(checkpoints_for(session).checkpoints)
    finally:
        session.close()


def test_the_walkthrough_episode_reaches_every_checkpoint(walkthrough_episode, zork1):
    """zork1's walkthrough played through the wiring (`main.py --agent walkthrough`)."""
    summary = walkthrough_episode.summary
    assert summary["progress"] == 1.0
    assert dict(summary["checkpoints"]) == {"reached": len(zork1.checkpoints), "total": len(zork1.checkpoints)}


CRAFTED = Checkpoints(
    story_md5="0" * 32,
    seed=None,
    walkthrough_steps=6,
    steps_played=6,
    checkpoints=(
        Checkpoint(ROOM, 10, 1, "Hall"),
        Checkpoint(ROOM, 11, 2, "Cellar"),
        Checkpoint(SCORE, 5, 3, "score 5"),
        Checkpoint(ROOM, 12, 4, "Vault"),
        Checkpoint(SCORE, 15, 6, "score 15"),
    ),
)
"""Three rooms and two scores along a made-up walkthrough."""


def test_a_room_counts_when_the_map_ever_held_it_and_a_score_when_the_best_score_came_to_it():
    progress = CRAFTED.progress({1, 11, 12, None}, best_score=7)
    assert progress == Progress(3, 5) and progress.share == pytest.approx(0.6)
    assert [c.name for c in CRAFTED.reached({1, 11, 12, None}, 7)] == ["Cellar", "score 5", "Vault"]
    assert progress.summary() == {"progress": 0.6, "checkpoints": {"reached": 3, "total": 5}}


def test_another_way_to_the_same_places_counts_the_same():
    """Checkpoints are game states, not steps: the order a player reached them in does not matter."""
    assert CRAFTED.progress([12, 10, 11], 15) == Progress(5, 5)


def test_an_episode_that_reached_none_has_progress_zero():
    progress = CRAFTED.progress({1, 2, 3}, best_score=4)
    assert progress.share == 0.0 and progress.summary()["progress"] == 0.0


def test_a_game_without_a_walkthrough_has_no_progress_not_zero():
    """lgop: Jericho has no walkthrough for it and no file lies beside it."""
    lgop = derive(story_file("lgop.z3"))
    assert lgop.walkthrough_steps == 0 and lgop.checkpoints == ()
    progress = lgop.progress({1, 2, 3}, 10)
    assert progress.share is None
    assert progress.summary() == {"progress": None, "checkpoints": {"reached": 0, "total": 0}}


def test_the_summary_of_an_episode_without_a_walkthrough_says_none(tmp_path):
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": 3}, knowledge={"enabled": False})
    summary = run_episode(story_file("lgop.z3"), config, ReplayAgent(["look", "wait", "inventory"])).summary
    assert summary["progress"] is None and summary["checkpoints"] == {"reached": 0, "total": 0}
