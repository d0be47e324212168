"""The loop break on what real language models typed (../shared/real-play): a stuck model is stopped soon after its
last real progress (a score, or a room the game had not shown before), a slow one that goes on to progress is not.
Each game is replayed through `_run_game_loop` as `main.py --agent replay --actions FILE` plays it."""

from __future__ import annotations

import pytest

from playthroughs.real_play import real_progress
from tests.helpers import real_play_file, replay_episode

pytestmark = pytest.mark.slow

STUCK_ON_THE_GRATING = "llm-plays-zork_zork1_claude-haiku-4-5_t1.txt"
"""claude-haiku-4-5 scores its 15 points by turn 25 and reaches its last new room at turn 128, then wanders the
forest and the house for 186 turns, coming back to the locked grating and the nailed door with other verbs."""
LOST_IN_THE_MAZE = "codecop-ai-plays-zork_zork1_gemini-2.5-pro_run1.txt"
"""gemini-2.5-pro walks the maze from turn 95 to 179 (walking, looking, walking), then out by the troll room at 180
and on to eight new rooms and the dam."""


def _commands(name: str) -> list[str]:
    return real_play_file(name).read_text().splitlines()


def test_a_model_retrying_the_grating_it_cannot_open_is_stopped_within_50_turns_of_its_last_new_room(
    rom_path, tmp_path
):
    commands = _commands(STUCK_ON_THE_GRATING)
    played = replay_episode(rom_path, tmp_path, commands, {}, max_turns=len(commands))
    (stop,) = played.events("stuck_termination")
    last = real_progress(list(played.records))[-1]
    assert stop["rule"] == "obstacle"
    assert last == 128 and stop["turn"] - last <= 50


def test_no_rule_stops_a_model_lost_in_the_maze_before_it_finds_the_way_out(rom_path, tmp_path):
    """Under the defaults: the obstacle and refused-again rules among them (gemini says a refusal again at once
    three times while lost)."""
    commands = _commands(LOST_IN_THE_MAZE)
    played = replay_episode(rom_path, tmp_path, commands, {}, max_turns=len(commands))
    troll_room = next(r["turn"] for r in played.records if r["room_name_after"] == "The Troll Room" and r["turn"] > 150)
    assert troll_room == 180
    assert played.summary["termination_reason"] == "max_turns"  # never stopped, let alone before the way out


def test_a_move_typed_as_a_sentence_is_a_move(rom_path, tmp_path):
    """Some models end every command with a full stop (`GO NORTH.`), which the parser reads as the end of the
    sentence: the move is a move for the loop break too (a wall met is a blocked exit, a walk is on the map)."""
    played = replay_episode(rom_path, tmp_path, ["GO EAST.", "GO NORTH.", "e.", "go west!"], {}, max_turns=4)
    wall, north, east, unknown = played.records
    assert wall["result_category"] == "blocked_exit"
    assert (north["room_name_after"], east["room_name_after"]) == ("North of House", "Behind House")
    assert unknown["result_category"] == "parser_failure"  # `I don't know the word "west!"`: no move
    assert played.orchestrator.map.predict_destination(north["room_id_before"], "north") == north["room_id_after"]
