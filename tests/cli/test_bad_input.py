"""Bad input: every case is one clear `error:` line on stderr and exit 2 — never a traceback, never a crash of the C
core, never a silently ignored flag. A story file Jericho's C core would crash on is refused before the core reads it;
one short only of its padding plays."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import main
from session.records import read_summary
from tests.helpers import story_file


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    code = main.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_error_line(code: int, err: str, *words: str) -> None:
    assert code == main.EXIT_USAGE
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.fixture
def cli(tmp_path, rom_path, no_api_key):
    """main.main with the zork1 story file, episodes under tmp_path, 3 turns and no console log."""

    def run(capsys, *argv: str) -> tuple[int, str, str]:
        base = ["--rom", str(rom_path), "--episode-dir", str(tmp_path / "episodes"), "--max-turns", "3", "--quiet"]
        return run_main(capsys, *base, *argv)

    return run


# -- story files -----------------------------------------------------------------------------------------------
def test_truncated_story_file_is_one_error(tmp_path, rom_path, capsys, cli):
    """A story file shorter than its header says would make the C core exit the whole process."""
    short = tmp_path / "half.z5"
    short.write_bytes(rom_path.read_bytes()[: rom_path.stat().st_size // 2])
    code, _, err = cli(capsys, "--rom", str(short))
    assert_one_error_line(code, err, "half.z5")


def test_zork1_minus_its_last_byte_plays(tmp_path, rom_path, capsys, cli):
    """Its header declares fewer bytes than the file has (padding): nothing the game needs is missing, so it plays
    (no AttributeError on the player object)."""
    short = tmp_path / "short.z5"
    short.write_bytes(rom_path.read_bytes()[:-1])
    code, out, err = cli(capsys, "--rom", str(short))
    assert code == 0, err
    assert read_summary(Path(out.strip().splitlines()[-1]).parent)["turns"] == 3


@pytest.mark.parametrize("content", [b"", b"abc", b"\x05" + b"\x00" * 100, b"PK\x03\x04 not a story"])
def test_files_that_are_no_story_are_one_error(tmp_path, capsys, cli, content):
    path = tmp_path / "bad.z5"
    path.write_bytes(content)
    code, _, err = cli(capsys, "--rom", str(path))
    assert_one_error_line(code, err, "bad.z5")


@pytest.mark.parametrize("where", ["missing.z5", "."])
def test_a_missing_story_file_is_one_error(tmp_path, capsys, cli, where):
    code, _, err = cli(capsys, "--rom", str(tmp_path / where))
    assert_one_error_line(code, err, "story file not found")


@pytest.mark.parametrize("game", ["sherlock.z5", "lgop.z3"])
def test_story_files_jericho_reads_only_in_part_play_offline(tmp_path, capsys, cli, game):
    """sherlock's dictionary is read once (a second get_dictionary() call crashes Jericho); lgop has no player object
    (reduced features: rooms unknown). Both play offline."""
    code, out, err = cli(capsys, "--rom", str(story_file(game)), "--max-turns", "20")
    assert code == 0, err
    summary = read_summary(Path(out.strip().splitlines()[-1]).parent)
    assert summary["turns"] == 20 and summary["termination_reason"] == "max_turns"


# -- replay files ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"open mailbox\ncaf\xe9\n", ("not UTF-8",)),  # Latin-1
        (b"\x89PNG\r\n\x1a\n\x00\x00", ("not UTF-8",)),  # binary
        (b"look\x00\n", ("line 1", "printable")),  # a NUL byte segfaults the emulator
        (b"north\n\x00\n", ("line 2", "printable")),  # a lone NUL hangs it
        (("x" * 197 + "\u00e9\n").encode(), ("line 1",)),  # crashed inside Jericho's truncation warning
        (b"north\n\x1b[2Jlook\n", ("line 2", "printable")),  # a terminal escape sequence
    ],
)
def test_bad_replay_files_are_one_error(tmp_path, capsys, cli, content, words):
    actions = tmp_path / "actions.txt"
    actions.write_bytes(content)
    code, _, err = cli(capsys, "--agent", "replay", "--actions", str(actions))
    assert_one_error_line(code, err, "actions.txt", *words)
    assert "\x1b" not in err


def test_a_missing_replay_file_is_one_error(tmp_path, capsys, cli):
    code, _, err = cli(capsys, "--agent", "replay", "--actions", str(tmp_path / "none.txt"))
    assert_one_error_line(code, err, "none.txt")


def test_actions_without_the_replay_agent_is_an_error(tmp_path, capsys, cli):
    actions = tmp_path / "actions.txt"
    actions.write_text("north\n")
    code, _, err = cli(capsys, "--agent", "offline", "--actions", str(actions))
    assert_one_error_line(code, err, "--actions", "--agent replay")


# -- configuration ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("toml", "words"),
    [
        (b"\xff\xfe[tool]\n", ("not valid TOML",)),
        (b"tool = 1\n", ("`tool` must be a table",)),
        (b"[tool]\nzorkgpt = 'x'\n", ("`zorkgpt` must be a table",)),
        (b"[tool.zorkgpt]\ngameplay = 3\n", ("gameplay",)),
        (b"[tool.zorkgpt.gameplay]\nmax_turns_per_episode = true\n", ("max_turns_per_episode", "integer")),
        (b"[tool.zorkgpt.gameplay]\nmax_turns_per_episode = '10'\n", ("max_turns_per_episode",)),
        (b"[tool.zorkgpt.loop_break.no_progress]\nmax_turns = 40.5\n", ("no_progress.max_turns",)),
        (b"[tool.zorkgpt.gameplay]\nnot_a_key = 1\n", ("unknown key",)),
        (b"[tool.zorkgpt\n", ("not valid TOML",)),
    ],
)
def test_bad_configuration_is_one_error(tmp_path, rom_path, capsys, no_api_key, toml, words):
    config = tmp_path / "bad.toml"
    config.write_bytes(toml)
    code, _, err = run_main(
        capsys, "--config", str(config), "--rom", str(rom_path), "--quiet", "--episode-dir", str(tmp_path)
    )
    assert_one_error_line(code, err, "bad.toml", *words)


@pytest.mark.parametrize("seed", ["0", "-1", str(2**31), str(2**32)])
def test_seeds_that_would_not_reproduce_are_errors(capsys, cli, seed):
    """0 and negative seeds are errors, never "the default seed" silently, and so are seeds of 2^31 and over, which
    would not reproduce."""
    code, _, err = cli(capsys, "--seed", seed)
    assert_one_error_line(code, err, "seed")


# -- the episode folder ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("under", ["a-file", "a-file/below"])
def test_an_episode_dir_that_cannot_be_written_is_one_error(tmp_path, capsys, cli, under):
    (tmp_path / "a-file").write_text("not a folder")
    code, _, err = cli(capsys, "--episode-dir", str(tmp_path / under))
    assert_one_error_line(code, err, "cannot write episode records", under)


def test_a_read_only_episode_dir_is_one_error(tmp_path, capsys, cli):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):  # root ignores the mode: use a file system nobody may write to
            folder = Path("/sys/zorkgpt-episodes")
        code, _, err = cli(capsys, "--episode-dir", str(folder))
        assert_one_error_line(code, err, "cannot write episode records", str(folder))
    finally:
        (tmp_path / "read-only").chmod(0o755)
