"""docs/extending.md, "A shadow probe", followed on a toy probe against the real emulator on zork1: the probe asks the
copy for `inventory` and answers the first line; the live game never moves, and a copy killed under the probe costs
that probe alone, counted under its name."""

from __future__ import annotations

import os
import signal

import pytest

from session.emulator import Emulator
from session.jericho_session import JerichoSession
from session.shadow import Shadow
from session.snapshots import state_digest

CARRYING = "You are carrying:"
"""zork1's first line of an answer to `inventory` when the player holds something."""


def first_inventory_line(shadow: Shadow, live: Emulator) -> str | None:
    """The first line of the game's answer to `inventory` from the live state; None when the copy failed."""
    state = live.get_state()
    played = shadow.run("inventory_line", lambda copy: copy.play_from(state, "inventory", observe=False))
    return played[0].splitlines()[0] if played is not None else None


@pytest.fixture
def session(rom_path):
    """zork1 with the leaflet in hand (`open mailbox`, `take leaflet`)."""
    session = JerichoSession(rom_path)
    session.reset()
    for command in ("open mailbox", "take leaflet"):
        session.step(command)
    yield session
    session.close()


def test_the_probe_answers_from_the_live_state_and_the_game_does_not_move(session):
    state, fingerprint, moves = state_digest(session.env.get_state()), session.fingerprint(), session.env.get_moves()
    assert first_inventory_line(session.shadow, session.env) == CARRYING
    assert session.shadow.probe_failures == {}
    after = (state_digest(session.env.get_state()), session.fingerprint(), session.env.get_moves())
    assert after == (state, fingerprint, moves)
    assert session.step("inventory").text.splitlines()[0] == CARRYING  # what the live game answers from there


def test_a_copy_killed_under_the_probe_costs_that_probe_alone(session):
    assert first_inventory_line(session.shadow, session.env) == CARRYING  # the copy is running
    os.kill(session.shadow.emulator.pid, signal.SIGKILL)
    assert first_inventory_line(session.shadow, session.env) is None
    assert session.shadow.probe_failures == {"inventory_line": 1}
    assert first_inventory_line(session.shadow, session.env) == CARRYING  # a fresh copy
    assert session.step("north").room_name == "North of House"  # the live game plays on
