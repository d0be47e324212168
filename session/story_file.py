"""The story file: where it is (`resolve_story_file`), whether Jericho's C core can run it (`check_story_bytes`), an
emulator started on it (`start_emulator`) and its walkthrough (`walkthrough`); each failure one clear StoryFileError.

`check_header` refuses what in a story file's header would crash, hang or stop Jericho's C core, and so the whole
process. Each rule is kept because copies of real story files (zork1 v3, detective v5, lostpig v8) that break it
crashed, hung or exited the C core when loaded, reset and played for a few turns, or made the session raise; no legal
story file breaks one (Z-Machine Standard 1.1, sections 1, 6, 11, 13). `uv run python -m
benchmarks.studies.story_headers --main` measures every fault (docs/results/story_headers.md) and
tests/session/test_story_file.py keeps a copy on each side:

- at least the 64-byte header; a version byte of 1 to 8 (version 6 loads too); Flags 1 bit 0 clear: exits;
- the file holds the length its header gives (0, as old games give, means the whole file), and that length
  covers dynamic memory and the dictionary: exits, crashes (SIGSEGV, SIGABRT) or hangs otherwise. Frotz allocates
  exactly that length, and Jericho's dictionary reader leaves the rest of the last page it reads unset;
- the dictionary as Jericho's dictionary reader takes it (entries of at most 10 bytes, the count read unsigned):
  exits. The session reads the dictionary, so a game that has one Jericho cannot read stops the process;
- the 240 global variables in dynamic memory (the game writes them, and Jericho saves and restores dynamic memory
  only): zork1 hangs, or the session raises reading them from there; detective and lostpig played a few turns.

What a header cannot tell from a legal one is left alone. An abbreviations address of 0 means the game has none
(14 of the 29 shared games have none: every entry is the empty string) and passes; in a game that does use them
any wrong address crashes, 0 and 64 as much as one inside the header, and in one that does not every address
plays. Left alone too: an initial program counter at something that is not code (crashes), global variables or
a static base moved within dynamic memory (zork1 and detective hung on one each). Not rules, as no copy failed on
them: the high memory mark, the object table (the session counts objects within dynamic memory only), the
alphabet, terminating-characters and header extension tables.
"""

from __future__ import annotations

import os
import struct
import warnings
from pathlib import Path

from session.commands import CommandFileError, read_command_file
from session.emulator import DEFAULT_TIME_LIMIT, LIVE, Emulator
from session.zmachine import GLOBAL_COUNT

ZORK1_MD5 = "b732a93a6244ddd92a9b9a3e3a46c687"
STORY_SUFFIXES = frozenset({".z1", ".z2", ".z3", ".z4", ".z5", ".z7", ".z8"})
"""File suffixes of the Z-machine story files a folder of games holds."""
WALKTHROUGH_SUFFIX = ".walkthrough"
"""A walkthrough for a game Jericho has none for: `game.walkthrough` beside `game.z8`."""

HEADER_BYTES = 64
GLOBALS_BYTES = 2 * GLOBAL_COUNT
BYTE_SWAPPED = 0x01
"""Bit 0 of Flags 1: Frotz reads it as "byte-swapped" (version 3) and Jericho's dictionary reader as a wrong game
(every version); both exit."""
JERICHO_LONGEST_ENTRY = 10
"""Jericho's dictionary reader exits on dictionary entries longer than this (bytes)."""


class StoryFileError(Exception):
    """The story file is missing or is not a Z-machine game Jericho can run."""


def resolve_story_file(cli_rom: str | None, config_path: str) -> Path:
    """`--rom`, else `ZORK_ROM`, else the configured `game_file_path`; a clear error when it is not there."""
    for origin, candidate in (("--rom", cli_rom), ("ZORK_ROM", os.environ.get("ZORK_ROM")), ("config", config_path)):
        if candidate:
            path = Path(candidate).expanduser()
            if not path.is_file():
                raise StoryFileError(
                    f"story file not found: {path} (from {origin}). "
                    f"Put zork1.z5 (md5 {ZORK1_MD5}) at {config_path}, or pass --rom PATH, or set ZORK_ROM=PATH."
                )
            return path
    raise StoryFileError(f"no story file given: put zork1.z5 (md5 {ZORK1_MD5}) at games/zork1.z5 or set ZORK_ROM.")


def check_story_bytes(path: Path) -> bytes:
    """The story file's bytes; a clear StoryFileError for one whose header would crash, hang or exit Jericho's C
    core and so the whole process (`check_header` says which, and the module's docstring why each rule is there)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise StoryFileError(f"cannot read story file {path}: {exc.strerror}") from None
    try:
        check_header(data)
    except UnplayableStory as exc:
        raise StoryFileError(f"{path} {exc}") from None
    return data


def start_emulator(path: Path, seed: int | None, role: str = LIVE, time_limit: float = DEFAULT_TIME_LIMIT) -> Emulator:
    """A new FrotzEnv, in a process of its own (session.emulator). Jericho copies its C library to a temporary
    folder for every emulator: a full disk there is a StoryFileError (one clear line), not a traceback."""
    try:
        return Emulator(path, seed, role, time_limit)
    except OSError as exc:
        raise StoryFileError(f"cannot start the Z-machine emulator for {path.name}: {exc.strerror or exc}") from None


def walkthrough(live: Emulator, path: Path) -> list[str]:
    """The walkthrough of the story file at `path`: Jericho's (asked of `live`, an emulator of it), else the commands
    of a `<story>.walkthrough` file beside the story file (one per line, as `--actions` reads them: what
    benchmarks.generated writes for a generated game); [] when there is neither."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        commands = list(live.get_walkthrough())
    beside = path.with_suffix(WALKTHROUGH_SUFFIX)
    if commands or not beside.is_file():
        return commands
    try:
        return read_command_file(beside)
    except CommandFileError as exc:
        raise StoryFileError(f"walkthrough {exc}") from None


class UnplayableStory(Exception):
    """The story file breaks a rule below; the message says how, after the file's name."""

    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule
        """Which rule: `header`, `version`, `flags 1`, `length`, `dictionary` or `globals`."""


def length_unit(version: int) -> int:
    """Bytes per unit of the file-length word at 0x1A (Standard 11.1.6)."""
    return 2 if version <= 3 else 4 if version <= 5 else 8


def check_header(data: bytes) -> None:
    """Raise UnplayableStory for a story file Jericho's C core would crash, hang or exit on."""
    if len(data) < HEADER_BYTES:  # exits: "Story file read error"
        raise UnplayableStory("header", "is not a Z-machine story file: it is shorter than the 64-byte header")

    def word(address: int) -> int:
        return struct.unpack_from(">H", data, address)[0] if address + 2 <= len(data) else 0

    version = data[0]
    if not 1 <= version <= 8:  # exits: "Unknown Z-code version"
        raise UnplayableStory(
            "version", f"is not a Z-machine story file: its version byte is {version} (versions are 1 to 8)"
        )
    if data[1] & BYTE_SWAPPED:
        raise UnplayableStory(
            "flags 1", "has bit 0 of its Flags 1 set (a byte-swapped file to Frotz): Jericho stops on it"
        )
    declared, static = word(0x1A) * length_unit(version), word(0x0E)
    story = declared or len(data)  # what Frotz loads: the length the header gives, else the file (old games give 0)
    if len(data) < max(story, static):  # exits: "Story file read error"
        raise UnplayableStory(
            "length", f"is truncated: its header says {max(story, static)} bytes, the file has {len(data)}"
        )
    if story < static:  # crashes: Frotz reads dynamic memory past what it loaded
        raise UnplayableStory(
            "length", f"gives a length of {story} bytes, shorter than its dynamic memory ({static} bytes)"
        )
    _check_dictionary(data, word(0x08), story)
    globals_ = word(0x0C)
    if globals_ + GLOBALS_BYTES > static:  # zork1 hangs, or the session raises: it reads them from dynamic memory
        raise UnplayableStory(
            "globals", f"has its global variables at {globals_:#x}, past its dynamic memory (ends {static:#x})"
        )


def _check_dictionary(data: bytes, start: int, story: int) -> None:
    """The dictionary (Standard 13.2) as Jericho's dictionary reader takes it, or it exits: entries of at most 10
    bytes, and all of them within the story, their count read unsigned (a negative count, legal for an unsorted
    dictionary, is read as tens of thousands of entries)."""
    lengths_at = start + 1 + (data[start] if start < story else 0)
    if lengths_at + 3 > story:
        raise UnplayableStory(
            "dictionary", f"has its dictionary at {start:#x}, past the end of the story ({story} bytes)"
        )
    entry_length, count = (
        data[lengths_at],
        struct.unpack_from(">H", data, lengths_at + 1)[0],
    )
    if entry_length > JERICHO_LONGEST_ENTRY:
        raise UnplayableStory("dictionary", f"has dictionary entries of {entry_length} bytes; Jericho reads at most 10")
    if lengths_at + 3 + entry_length * count > story:  # exits, or crashes or hangs when past what Frotz loaded
        unsorted = " (a negative count: an unsorted dictionary, which Jericho cannot read)" if count >= 0x8000 else ""
        raise UnplayableStory(
            "dictionary", f"has a dictionary of {count} entries that runs past the end of the story{unsorted}"
        )
