"""The refused-again rule: the command the game just refused, said again at once and refused alike. Counted on
records here; played on zork1 below: a model that sends every command twice, stuck in the coal mine (how a real
model's game went), is stopped soon after its last new room."""

from __future__ import annotations

import random

import jericho
import pytest

from managers.loop_break.refused_again import RefusalsRepeated
from playthroughs.real_play import real_progress
from tests.factories import first_stop, loop_break, turn_record
from tests.helpers import replay_episode

WALL = "You can't go that way."


def _turn(turn: int, command: str, category: str = "blocked_exit", response: str = WALL, **fields):
    return turn_record(turn, command=command, result_category=category, response=response, room_id_before=19, **fields)


def test_a_refusal_said_again_at_once_and_refused_alike_counts_once_per_repeat():
    repeated = RefusalsRepeated()
    assert not repeated.observe(_turn(1, "south"))  # the first try is a try
    assert repeated.observe(_turn(2, "go south"))  # the same command, canonically, the same answer
    assert repeated.observe(_turn(3, "s"))
    assert not repeated.observe(_turn(4, "north"))
    assert repeated.count == 2


def test_looks_waits_other_answers_changes_and_successes_said_again_do_not_count():
    repeated = RefusalsRepeated()
    repeated.observe(_turn(1, "look", "no_effect", "Coal Mine"))
    assert not repeated.observe(_turn(2, "look", "no_effect", "Coal Mine"))  # looking again is harmless
    repeated.observe(_turn(3, "wait", "no_effect", "Time passes."))
    assert not repeated.observe(_turn(4, "wait", "no_effect", "Time passes."))
    repeated.observe(_turn(5, "push button", "no_effect", "Click."))
    assert not repeated.observe(_turn(6, "push button", "no_effect", "Clunk."))  # another answer: something moved
    assert not repeated.observe(
        _turn(7, "push button", "no_effect", "Clunk.", world_hash_before="a", world_hash_after="b")
    )  # the world changed
    repeated.observe(_turn(8, "east", "success", "Coal Mine"))
    assert not repeated.observe(_turn(9, "east", "success", "Coal Mine"))  # the first one was no refusal
    assert repeated.count == 0


def test_a_turn_that_ran_nothing_breaks_the_repeat():
    repeated = RefusalsRepeated()
    repeated.observe(_turn(1, "south"))
    repeated.observe(turn_record(2, command="", ran=False))
    assert not repeated.observe(_turn(3, "south"))


def test_the_rule_stops_once_its_times_and_turns_are_reached_and_is_off_at_zero():
    others_off = {"fruitless": {"turns": 0}, "repetition": {"stop": False}, "cycle": {"turns": 0}}
    doubled = [_turn(t, ["south", "west", "up", "down"][(t - 1) // 2 % 4]) for t in range(1, 41)]
    turn, rule = first_stop(loop_break(**others_off), doubled)
    assert rule == "refused_again" and turn == 16  # seven repeats by turn 14, then the rule's 16 turns
    turn, rule = first_stop(loop_break(**others_off, refused_again={"times": 0}), doubled)
    assert rule != "refused_again"


COAL_MINE = 311
"""zork1's walkthrough reaches the coal mine at this step."""


@pytest.mark.slow
def test_a_model_sending_every_command_twice_in_the_coal_mine_is_stopped_soon_after_its_last_new_room(
    rom_path, tmp_path
):
    env = jericho.FrotzEnv(str(rom_path))
    to_the_mine = env.get_walkthrough()[:COAL_MINE]
    env.close()
    draw = random.Random(1)
    directions = ["north", "south", "east", "west", "northeast", "northwest", "southeast", "southwest", "up", "down"]
    doubled = [step for _ in range(70) for step in [draw.choice(directions)] * 2]
    commands = to_the_mine + doubled
    played = replay_episode(rom_path, tmp_path, commands, {}, max_turns=len(commands))
    (stop,) = played.events("stuck_termination")
    last = real_progress(list(played.records))[-1]
    assert stop["rule"] == "refused_again"
    assert stop["turn"] - last <= 20  # the no-progress backstop waited 74 turns here
