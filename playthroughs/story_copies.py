"""Copies of real story files with one header field altered, as the story-file check's tests and the story-header study
craft them, and a copy's walkthrough played in a child process against the original's (a crash of the copy's C core
takes only the child down):

    uv run python -m playthroughs.story_copies COPY ORIGINAL   # prints `identical N`, or the first step that differs
"""

from __future__ import annotations

import signal
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from session.story_file import length_unit

ROOT = Path(__file__).resolve().parents[1]


def header_word(data: bytes, address: int) -> int:
    """The header word at `address` (big-endian, as the Z-machine stores it)."""
    return struct.unpack_from(">H", data, address)[0]


def with_word(data: bytes, address: int, value: int) -> bytes:
    """`data` with the header word at `address` set to `value`."""
    return data[:address] + struct.pack(">H", value & 0xFFFF) + data[address + 2 :]


def with_byte(data: bytes, address: int, value: int) -> bytes:
    """`data` with the header byte at `address` set to `value`."""
    return data[:address] + bytes([value & 0xFF]) + data[address + 1 :]


def with_version(data: bytes, version: int) -> bytes:
    """`data` marked as `version`, its length word rescaled to that version's unit (so only the version differs)."""
    resized = with_word(data, 0x1A, header_word(data, 0x1A) * length_unit(data[0]) // length_unit(version))
    return with_byte(resized, 0, version)


def dictionary_header(data: bytes) -> int:
    """Address of the dictionary's entry-length byte (after the word separators, Standard 13.2)."""
    start = header_word(data, 0x08)
    return start + 1 + data[start]


def abbreviation_free(data: bytes) -> bool:
    """Whether the game has no abbreviations: every entry of its table is the empty string (Inform writes such a
    table when it is not asked to abbreviate), so no text of the game can use one."""
    version, table = data[0], header_word(data, 0x18)
    entries = 0 if version == 1 else 32 if version == 2 else 96  # Standard 3.3
    if not table or table + 2 * entries > len(data):
        return not table
    return all(header_word(data, 2 * header_word(data, table + 2 * i)) == 0x8000 for i in range(entries))


def play_walkthrough(path: str, original: str) -> int:
    """Play the walkthrough of `original` (with its seed) on `path` and on a reference copy of `original`: prints
    `identical N` when every response is the same, else the first step that differs. A crash of `path` kills this
    process. Jericho recognises a game by its file's md5 and words its responses otherwise for one it does not
    know; the reference differs from `original` in the interpreter-number byte (0x1E), which Frotz overwrites when
    it loads a game of version 4 or later, so that both files are unknown to Jericho alike."""
    import warnings

    warnings.simplefilter("ignore")
    from jericho import FrotzEnv

    known = FrotzEnv(original)
    steps, seed = known.get_walkthrough(), known.bindings.get("seed")
    with tempfile.TemporaryDirectory() as folder:  # Frotz opens the file when the game is reset
        reference_path = Path(folder) / Path(original).name
        data = Path(original).read_bytes()
        reference_path.write_bytes(with_byte(data, 0x1E, data[0x1E] ^ 0xFF))
        reference, copy = FrotzEnv(str(reference_path), seed=seed), FrotzEnv(path, seed=seed)
        if reference.reset()[0] != copy.reset()[0]:
            print("differs at the opening text")
            return 1
        for number, step in enumerate(steps, start=1):
            if reference.step(step)[0] != copy.step(step)[0]:
                print(f"differs at step {number} ({step!r})")
                return 1
    print(f"identical {len(steps)}")
    return 0


def walkthrough_outcome(path: Path, original: Path, timeout: float) -> str:
    """`identical N` when the story file at `path` plays `original`'s walkthrough with its every response, else the
    first step that differs; `crashes (SIGNAL)`, `hangs` (not done after `timeout` seconds) or `exits (STATUS)` when
    the child did not get that far."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "playthroughs.story_copies", str(path), str(original)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return "hangs"
    if done.returncode < 0:
        return f"crashes ({signal.Signals(-done.returncode).name})"
    return done.stdout.strip() or f"exits ({done.returncode})"


if __name__ == "__main__":
    sys.exit(play_walkthrough(sys.argv[1], sys.argv[2]))
