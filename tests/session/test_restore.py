"""Rewind's primitive: the game restored exactly as it was right after a turn, verified equal (room, score, inventory,
object tree, globals), and playing on from it exactly as it did the first time, on every corpus game."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from playthroughs.restore_commands import DICE, UNGUIDED
from session.commands import DICE_ROLL
from session.jericho_session import JerichoSession
from session.snapshots import Restored, RestoreError
from tests.helpers import CORPUS, story_file

CONTINUATION = 15
"""Walkthrough steps played after the snapshot, before each restore (then DICE)."""


def _snapshot_turn(session: JerichoSession, commands: list[str]) -> tuple[int, bool]:
    """A turn from a third of the way on, a few steps before the walkthrough's next score change (when it has one:
    the second value), so that the continuation changes the score, and most often the room and the objects."""
    if not session.walkthrough():
        return 1, False
    session.reset()
    scores = [session.step(command).score for command in commands]
    changes = [i for i in range(len(commands) // 3, len(commands)) if scores[i] != scores[i - 1]]
    if changes:
        return max(1, changes[0] - CONTINUATION // 2), True
    return max(1, len(commands) // 3), False


@pytest.mark.slow
@pytest.mark.parametrize("name", CORPUS)
def test_a_restored_game_equals_the_snapshot_and_plays_on_identically(name):
    session = JerichoSession(story_file(name))
    commands = session.walkthrough() or list(UNGUIDED)
    turn, scores = _snapshot_turn(session, commands)
    session.reset()
    for command in commands[:turn]:
        view = session.step(command)
    snap, at_turn, idle = session.snapshot(), session.fingerprint(), session.idle_world()
    continuation = commands[turn : turn + CONTINUATION] + list(DICE)
    first = [(session.step(command), session.fingerprint()) for command in continuation]
    assert session.fingerprint() != at_turn, "the continuation changed nothing a restore would have to undo"
    if scores:
        assert {after.score for after, _ in first} != {view.score}, "the continuation never changed the score"
    for way in (Restored.STATE, Restored.REPLAY, Restored.STATE):
        restored, how = session.restore(snap, replay=way is Restored.REPLAY)
        assert how is way
        assert session.fingerprint() == at_turn == snap.fingerprint
        assert restored is snap.view
        assert session.observe(view.rolled_dice) == view  # read anew: room, objects, world hash, response, ended
        assert np.array_equal(session.idle_world().globals, idle.globals)
        again = [(session.step(command), session.fingerprint()) for command in continuation]
        assert again == first, f"{name}: after a restore ({way}) the game plays on differently"


def _played(session: JerichoSession, commands: list[str]) -> list[tuple]:
    return [(session.step(command), session.fingerprint()) for command in commands]


def test_a_restore_after_a_death_gives_back_the_living_game_and_the_death(rom_path, walkthrough):
    session = JerichoSession(rom_path)
    session.reset()
    for command in walkthrough[:9]:  # the kitchen's window, open: no safe place to jump
        session.step(command)
    alive = session.snapshot()
    died = session.step(DICE_ROLL)
    assert died.game_over
    dead, after_death = session.snapshot(), _played(session, ["look", "inventory", "w"])
    view, how = session.restore(alive)
    assert (how, view.game_over, session.fingerprint()) == (Restored.STATE, False, alive.fingerprint)
    assert session.step(DICE_ROLL) == died
    view, how = session.restore(dead)
    assert (how, view, session.fingerprint()) == (Restored.STATE, died, dead.fingerprint)
    assert _played(session, ["look", "inventory", "w"]) == after_death


def test_a_state_the_emulator_does_not_reach_is_replayed_from_reset(rom_path, walkthrough):
    session = JerichoSession(rom_path)
    session.reset()
    for command in walkthrough[:20]:
        session.step(command)
    wrong_start = session.snapshot().anchor  # the state before turn 20, not before turn 30
    for command in walkthrough[20:30]:
        view = session.step(command)
    snap, later = session.snapshot(), _played(session, walkthrough[30:40])
    restored, how = session.restore(replace(snap, anchor=wrong_start))
    assert (how, restored, session.fingerprint()) == (Restored.REPLAY, view, snap.fingerprint)
    assert _played(session, walkthrough[30:40]) == later


def test_a_snapshot_restores_on_another_session_and_right_after_reset(rom_path, walkthrough):
    session = JerichoSession(rom_path)
    start = session.reset()
    at_start = session.snapshot()
    for command in walkthrough[:12]:
        view = session.step(command)
    snap, later = session.snapshot(), _played(session, walkthrough[12:20])
    other = JerichoSession(rom_path)
    other.reset()
    assert other.restore(snap) == (view, Restored.STATE)
    assert _played(other, walkthrough[12:20]) == later
    assert other.restore(at_start) == (start, Restored.STATE)
    assert other.commands == [] and other.idle_world() is None


def test_a_snapshot_of_another_game_is_refused(rom_path):
    zork = JerichoSession(rom_path)
    zork.reset()
    other = JerichoSession(story_file("detective.z5"))
    other.reset()
    with pytest.raises(RestoreError, match="another story file"):
        other.restore(zork.snapshot())


def test_keys_left_over_from_a_key_prompt_do_not_reach_the_restored_game():
    """sherlock's WAIT asks "continue waiting? Please press Y or N", read one key at a time: `No` answers with its `N`
    and leaves `o` behind, for the next key prompt. Restored to just after that answer, the game plays on as it did
    the first time, though the abandoned turns left their own key behind (the answer's state alone, played again,
    would take that `o` for the answer)."""
    session = JerichoSession(story_file("sherlock.z5"))
    session.reset()
    walkthrough = session.walkthrough()
    assert walkthrough[7:9] == ["WAIT", "No"]
    for command in walkthrough[:8]:
        session.step(command)
    asked = session.snapshot()
    session.step("No")
    answered, later = session.snapshot(), _played(session, walkthrough[9:20])
    session.restore(asked)
    session.step("No")  # the abandoned turn: an `o` left again
    assert session.restore(answered) == (answered.view, Restored.STATE)
    assert _played(session, walkthrough[9:20]) == later
