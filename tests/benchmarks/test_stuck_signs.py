"""benchmarks.studies.stuck_signs on a game of real play written here (zork1): a model that reaches the living room and
then goes round the kitchen and the living room. Every sign climbs in its tail and stays low in its healthy opening."""

from __future__ import annotations

from benchmarks import real_play
from benchmarks.studies import stuck_signs

OPENING = ["open mailbox", "take leaflet", "north", "east", "open window", "west"]
"""To the kitchen through the window: new rooms and the window's 10 points; the last real progress is turn 7."""
ROUND = ["west", "east", "look"]
"""Living room and kitchen, round and round: the same moves and look, answered alike."""


def _real_play(tmp_path, rom_path, rounds: int, *sets: str):
    folder = tmp_path / "play"
    folder.mkdir(exist_ok=True)
    (folder / "test_zork1_round.txt").write_text("\n".join(OPENING + ROUND * rounds) + "\n")
    out = tmp_path / ("out" + "".join(sets))
    args = ["--play", str(folder), "--games", str(rom_path.parent), "--out", str(out), "--records", str(tmp_path / "r")]
    assert real_play.main([*args, *(f"--set={s}" for s in sets)]) == 0
    return out


def test_the_signs_climb_in_a_stuck_tail_and_the_study_says_when_a_safe_rule_would_stop_it(tmp_path, rom_path):
    out = _real_play(tmp_path, rom_path, 20)
    (play,) = stuck_signs.real_plays(out)
    assert play.healthy_until == play.stuck_from == 7
    echoes = stuck_signs.echoes(play.records)
    worked = stuck_signs.nothing_new_worked(play.records)
    rooms = stuck_signs.few_rooms(play.records)
    last = play.records[-1]["turn"]
    assert echoes[-1] == stuck_signs.ECHO_WINDOW  # after one round every command is answered as before
    assert rooms[-1] == last - 6  # two rooms from the living room on (turn 7 counted)
    assert worked[-1] >= last - 10  # the first walk each way was new, nothing since
    assert max(echoes[:7]) == 0 and max(rooms[:7]) <= 7
    assert stuck_signs.refused_again(play.records)[-1] == 0  # every walk and look there worked
    assert stuck_signs.walls_again(play.records)[-1] == 0


def test_a_wall_bumped_into_again_from_the_same_room_counts_until_real_progress(tmp_path, rom_path):
    """The kitchen has no way south: said three times, a wall found once and bumped into twice. The living room is a
    new room (real progress), and its own wall to the south is one found there, not bumped into again."""
    folder = tmp_path / "play"
    folder.mkdir()
    (folder / "test_zork1_walls.txt").write_text("\n".join([*OPENING, "south", "south", "south", "west", "south"]))
    out = tmp_path / "out"
    args = ["--play", str(folder), "--games", str(rom_path.parent), "--out", str(out), "--records", str(tmp_path / "r")]
    assert real_play.main(args) == 0
    (play,) = stuck_signs.real_plays(out)
    assert stuck_signs.walls_again(play.records)[6:] == [0, 1, 2, 0, 0]


def test_a_folder_without_real_play_is_one_error_line(tmp_path, capsys):
    assert stuck_signs.main(["--real", str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.strip().startswith("error: ")
