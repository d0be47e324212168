"""A turn flows one way: each proposal is read once into a `Command` that every later step uses, and the record the
managers read is built once, whole, and frozen."""

from __future__ import annotations

import dataclasses

import pytest

import session.commands as commands
from agents.replay_agent import ReplayAgent
from orchestration.orchestrator import Orchestrator
from tests.helpers import make_config, run_episode

TURNS = 60


def test_a_command_is_read_once_however_many_steps_ask_about_it(rom_path, walkthrough, tmp_path, monkeypatch):
    """Over 60 turns of zork1's walkthrough, with the precheck, the offline critic, the loop break and the session
    all asking about each command, the harness decides whether a command may run at most twice a turn on average
    and splits texts into words at most ten times a turn (the checkpoints derived at the episode's end are no turn).
    """
    counts = {"why_not_run": 0, "words_in": 0}
    counting = False
    for name in counts:
        real = getattr(commands, name)

        def counted(text, real=real, name=name):
            if counting:
                counts[name] += 1
            return real(text)

        monkeypatch.setattr(commands, name, counted)
    commands.read_command.cache_clear()
    loop = Orchestrator._run_game_loop

    def turns_counted(self):
        nonlocal counting
        counting = True
        try:
            loop(self)
        finally:
            counting = False

    monkeypatch.setattr(Orchestrator, "_run_game_loop", turns_counted)
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": TURNS})
    result = run_episode(rom_path, config, ReplayAgent(walkthrough, kind="walkthrough"))
    commands.read_command.cache_clear()
    assert result.summary["turns"] == TURNS
    assert counts["why_not_run"] <= 2 * TURNS
    assert counts["words_in"] <= 10 * TURNS


def test_a_turn_record_cannot_be_changed_once_built(rom_path, walkthrough, tmp_path):
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": 3})
    result = run_episode(rom_path, config, ReplayAgent(walkthrough, kind="walkthrough"))
    record = result.orchestrator.last_record
    assert record.turn == 3 and record.events == result.records[-1]["events"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.command = "quit"
