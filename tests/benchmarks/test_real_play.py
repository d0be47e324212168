"""benchmarks.real_play on a game of real play written here (zork1): the stop, the turns it saves after the last
real progress, a false stop when the model would have gone on, and the margins report counting the game as healthy
up to its last real progress; bad folders are one error line."""

from __future__ import annotations

import json

from benchmarks import margins, real_play
from playthroughs.real_play import false_stop, real_progress
from session.config import GameConfiguration
from tests.helpers import PYPROJECT

OPENING = ["open mailbox", "take leaflet", "north", "east", "open window", "west"]
"""To the kitchen through the window: two new rooms and the window's 10 points."""
ROUND = ["west", "east", "look"]
"""Living room and kitchen, round and round."""


def _play(tmp_path, rom_path, commands: list[str], *sets: str) -> dict:
    folder = tmp_path / "play"
    folder.mkdir(exist_ok=True)
    (folder / "test_zork1_round.txt").write_text("\n".join(commands) + "\n")
    out = tmp_path / "out"
    args = ["--play", str(folder), "--games", str(rom_path.parent), "--out", str(out), "--records", str(tmp_path / "r")]
    assert real_play.main([*args, *(f"--set={s}" for s in sets)]) == 0
    return json.loads((out / "real_play.json").read_text())


def test_a_model_going_round_is_stopped_and_the_turns_after_its_last_progress_are_counted(tmp_path, rom_path):
    played = _play(tmp_path, rom_path, OPENING + ROUND * 30)
    (game,) = played["runs"]
    assert game["turns"] == len(OPENING) + 3 * 30 and game["last_real_progress"] == 7  # the living room is new
    assert game["stop"] is not None and not game["false_stop"]
    assert game["saved"] == game["turns"] - game["stop"]
    assert game["after_last_progress"] == game["turns"] - 7
    assert played["summary"]["saved_share"] == round(game["saved"] / game["after_last_progress"], 3)
    # a stop exactly 30 turns after the last progress spares all but those 30
    assert played["summary"]["saved_by_a_stop_after"]["30"] == round(1 - 30 / game["after_last_progress"], 3)


def test_a_stop_before_the_model_would_score_again_is_false(tmp_path, rom_path):
    cellar = ["west", "take lamp", "move rug", "open trap door", "turn on lamp", "down"]  # 25 points more
    played = _play(tmp_path, rom_path, OPENING + ROUND * 20 + cellar)
    (game,) = played["runs"]
    assert game["stop"] is not None and game["stop"] < game["turns"]
    records = [json.loads(line) for line in open(game["records"])]
    assert real_progress(records)[-1] > game["stop"] and false_stop(records, game["stop"])
    assert game["false_stop"] and played["summary"]["false_stops"] == ["test_zork1_round"]
    # from the living room (turn 7) round and round, then to the cellar's points at turn 72: a quiet stretch that
    # ended in progress
    assert game["longest_quiet"] == {"turns": 65, "from": 7, "to": 72}
    assert played["summary"]["longest_quiet_before_progress"] == "65 (test_zork1_round, turns 7-72)"


def test_margins_counts_a_game_of_real_play_as_healthy_up_to_its_last_progress(tmp_path, rom_path):
    _play(tmp_path, rom_path, OPENING + ROUND * 30)
    rows = margins.load([tmp_path / "out"])
    (row,) = rows
    assert row["kind"] == "real" and row["healthy_until"] == 7 and margins.half(row["stem"]) == "tuning"
    result = margins.evaluate(rows, GameConfiguration.from_toml(PYPROJECT))
    assert result["healthy_runs"] == 1 and not result["stopped"]
    assert result["stuck"]["real (tuning)"]["runs"] == 1  # its tail of more than LONG_TAIL turns is a loop


def test_a_folder_that_is_no_real_play_is_one_error_line(tmp_path, rom_path, capsys):
    assert real_play.main(["--play", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    (tmp_path / "play").mkdir()
    (tmp_path / "play" / "a_game_nobody_has.txt").write_text("north\n")
    args = ["--play", str(tmp_path / "play"), "--games", str(rom_path.parent), "--out", str(tmp_path / "o")]
    assert real_play.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("error: ") for line in err)
