"""The story-file check (session.story_file.check_header through check_story_bytes): a crafted copy of a real story
file on each side of each rule; every shared game passes; an abbreviations address of 0 (no abbreviations) passes.

Which faults crash, hang or exit Jericho's C core was measured by benchmarks.studies.story_headers
(docs/results/story_headers.md); the copies are crafted as that study crafts them (playthroughs.story_copies), and no
copy that could crash is loaded here, except in a child process.
"""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from playthroughs.story_copies import (
    abbreviation_free,
    dictionary_header,
    walkthrough_outcome,
    with_byte,
    with_version,
    with_word,
)
from session.story_file import StoryFileError, UnplayableStory, check_header, check_story_bytes
from tests.helpers import CORPUS, ROOT, story_file


def word(data: bytes, address: int) -> int:
    return struct.unpack_from(">H", data, address)[0]


def game(name: str) -> bytes:
    return story_file(name).read_bytes()


def verdict(data: bytes, tmp_path: Path, name: str = "copy.z5") -> str:
    """What the real check says of a story file holding `data`: "accepted", or its one-line message."""
    path = tmp_path / name
    path.write_bytes(data)
    try:
        check_story_bytes(path)
    except StoryFileError as exc:
        message = str(exc)
        assert message.startswith(str(path)) and "\n" not in message
        return message
    return "accepted"


def rule(data: bytes) -> str:
    try:
        check_header(data)
    except UnplayableStory as exc:
        return exc.rule
    return ""


@pytest.mark.parametrize("name", CORPUS)
def test_every_shared_game_passes(name, tmp_path):
    assert verdict(game(name), tmp_path) == "accepted"


@pytest.mark.parametrize("name", CORPUS)
def test_an_abbreviations_address_of_0_passes(name, tmp_path):
    """0 is the Standard's "no abbreviations table"; the check never refuses it."""
    assert verdict(with_word(game(name), 0x18, 0), tmp_path) == "accepted"


def test_a_game_without_abbreviations_plays_its_walkthrough_with_address_0(tmp_path):
    """detective has no abbreviations (every entry of its table is the empty string): with address 0 it is a legal file
    with no abbreviations table. Played in a child, its walkthrough gives every response the original gives."""
    original = story_file("detective.z5")
    data = original.read_bytes()
    assert abbreviation_free(data) and word(data, 0x18) != 0
    copy = tmp_path / "detective.z5"
    copy.write_bytes(with_word(data, 0x18, 0))
    assert verdict(copy.read_bytes(), tmp_path, "checked.z5") == "accepted"
    outcome = walkthrough_outcome(copy, original, timeout=120)
    assert outcome.startswith("identical ") and int(outcome.split()[1]) > 40, outcome


def test_games_that_use_abbreviations_are_not_taken_for_games_without():
    assert not abbreviation_free(game("zork1.z5"))
    assert abbreviation_free(game("detective.z5"))


@pytest.mark.parametrize("address", [2, 40, 63, 64, 0xFFFF])
def test_no_rule_on_where_the_abbreviations_are(address, tmp_path):
    """Measured: a game that uses abbreviations crashes on any wrong address, 0 and 64 as much as one inside the
    header, and one that does not plays with any; the header cannot tell, so the check leaves it alone."""
    assert verdict(with_word(game("detective.z5"), 0x18, address), tmp_path) == "accepted"


def test_the_header_must_be_whole(tmp_path):
    data = game("zork1.z5")
    message = verdict(data[:63], tmp_path)
    assert "not a Z-machine story file" in message and "64-byte header" in message
    assert rule(data[:63]) == "header"
    assert verdict(data[: word(data, 0x1A) * 2], tmp_path) == "accepted"  # cut right at its length: all there


@pytest.mark.parametrize("name", ["zork1.z5", "detective.z5"])
def test_every_version_jericho_runs_passes(name, tmp_path):
    data = game(name)
    for version in range(1, 9):
        assert verdict(with_version(data, version), tmp_path) == "accepted", version
    for version in (0, 9, 255):
        message = verdict(with_version(data, version), tmp_path)
        assert f"its version byte is {version} (versions are 1 to 8)" in message


@pytest.mark.parametrize("name", ["zork1.z5", "detective.z5", "lostpig.z8"])
def test_flags_1_bit_0(name, tmp_path):
    data = game(name)
    assert "bit 0 of its Flags 1" in verdict(with_byte(data, 1, data[1] | 0x01), tmp_path)
    assert verdict(with_byte(data, 1, data[1] | 0x7E), tmp_path) == "accepted"


@pytest.mark.parametrize("name", ["zork1.z5", "detective.z5", "lostpig.z8"])
def test_the_length_the_header_gives(name, tmp_path):
    data = game(name)
    unit = 2 if data[0] <= 3 else 4 if data[0] <= 5 else 8
    size, static = len(data), word(data, 0x0E)
    assert verdict(with_word(data, 0x1A, 0), tmp_path) == "accepted"  # old games give none: the whole file
    assert verdict(with_word(data, 0x1A, size // unit), tmp_path) == "accepted"
    assert f"the file has {size}" in verdict(with_word(data, 0x1A, size // unit + 1), tmp_path)
    message = verdict(with_word(data[: static - 64], 0x1A, 0), tmp_path)
    assert f"is truncated: its header says {static} bytes" in message
    short = with_word(data, 0x1A, static // unit - 1)
    assert "shorter than its dynamic memory" in verdict(short, tmp_path) and rule(short) == "length"


@pytest.mark.parametrize("name", ["zork1.z5", "detective.z5", "lostpig.z8"])
def test_the_length_covers_the_dictionary(name, tmp_path):
    data = game(name)
    unit = 2 if data[0] <= 3 else 4 if data[0] <= 5 else 8
    count_at = dictionary_header(data) + 1
    end = count_at + 2 + data[count_at - 1] * word(data, count_at)
    assert verdict(with_word(data, 0x1A, -(-end // unit)), tmp_path) == "accepted"
    at_its_start = with_word(data, 0x1A, -(-word(data, 0x08) // unit))
    assert "past the end of the story" in verdict(at_its_start, tmp_path) and rule(at_its_start) == "dictionary"


@pytest.mark.parametrize("name", ["zork1.z5", "detective.z5", "lostpig.z8"])
def test_the_dictionary_as_jericho_reads_it(name, tmp_path):
    data = game(name)
    count_at = dictionary_header(data) + 1
    assert verdict(with_byte(data, count_at - 1, 10), tmp_path) == "accepted"
    assert "entries of 11 bytes; Jericho reads at most 10" in verdict(with_byte(data, count_at - 1, 11), tmp_path)
    assert verdict(with_word(data, count_at, 0), tmp_path) == "accepted"
    unsorted = verdict(with_word(data, count_at, 0x10000 - word(data, count_at)), tmp_path)
    assert "an unsorted dictionary, which Jericho cannot read" in unsorted
    assert "runs past the end of the story" in verdict(with_word(data, count_at, 0x7FFF), tmp_path)


@pytest.mark.parametrize("name", ["zork1.z5", "detective.z5", "lostpig.z8"])
def test_the_globals_are_in_dynamic_memory(name, tmp_path):
    data = game(name)
    static = word(data, 0x0E)
    assert verdict(with_word(data, 0x0C, static - 480), tmp_path) == "accepted"  # the last 240 words of it
    for address in (static - 478, static, 0xFFFF):
        message = verdict(with_word(data, 0x0C, address), tmp_path)
        assert f"has its global variables at {address:#x}, past its dynamic memory (ends {static:#x})" in message


@pytest.mark.slow  # main.py in a subprocess
def test_an_object_table_past_dynamic_memory_passes_and_plays(tmp_path):
    """No rule: the session counts objects within dynamic memory only (it raised before); played in a child."""
    data = game("zork1.z5")
    copy = tmp_path / "objects.z5"
    copy.write_bytes(with_word(data, 0x0A, word(data, 0x0E)))
    assert verdict(copy.read_bytes(), tmp_path) == "accepted"
    done = main_py(
        "--rom",
        str(copy),
        "--agent",
        "offline",
        "--critic",
        "offline",
        "--max-turns",
        "3",
        "--episode-dir",
        str(tmp_path / "episodes"),
        "--no-knowledge",
        "--quiet",
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-800:]


def main_py(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "main.py", *args], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )


@pytest.mark.slow  # main.py in a subprocess
def test_a_crashing_header_is_one_error_line_from_main(tmp_path):
    """zork1 whose header gives a length of 64 bytes: the C core dies of SIGSEGV on it (measured); main.py says so
    in one line and exits 2 before loading it."""
    data = game("zork1.z5")
    copy = tmp_path / "zork1.z5"
    copy.write_bytes(with_word(data, 0x1A, 32))
    done = main_py("--rom", str(copy), "--episode-dir", str(tmp_path / "episodes"), "--no-knowledge", "--quiet")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr[-800:]
    assert lines == [f"error: {copy} gives a length of 64 bytes, shorter than its dynamic memory (11859 bytes)"]
    assert not (tmp_path / "episodes").exists()
