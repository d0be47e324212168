"""Which story-file header faults crash, hang or exit Jericho's C core: the evidence behind `check_story_bytes`.

    uv run python -m benchmarks.studies.story_headers [--games DIR] [--stories zork1.z5,detective.z5,lostpig.z8]
        [--timeout S] [--main] [--out docs/results/story_headers.md]

Each fault is one header field altered (or the file cut short) in a copy of a real story file, written to a
temporary folder. Every copy is loaded in a child process, so that a crash or a hang cannot take this one down: the
child builds a FrotzEnv, resets it, plays a few commands and makes the other calls the session makes on the C core
(the world objects, the dictionary, a saved and restored state). What the child did is the C core's outcome:

- plays: it finished;
- exits (status: message): the C core called exit() (Frotz's os_fatal, Jericho's dictionary reader);
- crashes (signal): the process died of a signal (SIGSEGV, SIGABRT, SIGFPE);
- hangs: it had not finished after --timeout seconds (it was killed);
- raises (exception): Jericho's Python wrapper raised (a traceback for its caller, not a dead process).

With --main, each copy is also played through main.py (offline agent, a few turns) with the header check turned
off: what a user would see without it (a traceback where the session cannot read the file). Beside these, what
`check_story_bytes` says of the copy. A rule of the check is backed when a copy that breaks it does not play; the
table marks a copy refused although everything played, and one accepted although something failed.

Then the legal variants: every story file in --games is checked, and each game without abbreviations (every entry of its
table the empty string) is copied with an abbreviations address of 0, the Standard's "no abbreviations": the copy must
be accepted and play the game's whole walkthrough with the original's every response (in a child:
playthroughs/story_copies.py, which also crafts the copies). With --out, the tables go to a markdown file with the
command and commit.
"""

from __future__ import annotations

import argparse
import runpy
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from benchmarks import cli
from playthroughs.story_copies import (
    abbreviation_free,
    dictionary_header,
    header_word,
    walkthrough_outcome,
    with_byte,
    with_version,
    with_word,
)
from session.provenance import command, commit
from session.story_file import (
    STORY_SUFFIXES,
    StoryFileError,
    UnplayableStory,
    check_header,
    check_story_bytes,
    length_unit,
)
from session.tables import markdown_table

ROOT = Path(__file__).resolve().parents[2]
PLAYED = ("look", "inventory", "north", "south", "examine me", "wait")
"""Commands the child plays after reset: a few turns of parsing, printing and moving."""
RAISED = 3
"""The child's exit status when Jericho's Python wrapper raised."""
DEFAULT_STORIES = ("zork1.z5", "detective.z5", "lostpig.z8")
"""One story of each version the shared corpus holds (3, 5, 8); detective never uses its abbreviations."""


@dataclass(frozen=True)
class Fault:
    field: str
    """The header field altered (Standard 11.1), or `file` when the file itself is cut."""
    value: str
    """What it was set to, in words."""
    craft: Callable[[bytes], bytes]
    """The faulty copy of a story file's bytes."""


def faults(data: bytes) -> Iterator[Fault]:
    """The faults measured on a story file whose bytes are `data`."""
    version, size = data[0], len(data)
    unit = length_unit(version)
    static, declared = header_word(data, 0x0E), header_word(data, 0x1A) * unit
    count_at = dictionary_header(data) + 1
    dictionary_end = count_at + 2 + data[count_at - 1] * header_word(data, count_at)

    def word(field: str, address: int, values: dict[str, int]) -> Iterator[Fault]:
        for label, value in values.items():
            yield Fault(field, label, lambda d, v=value: with_word(d, address, v))

    for value in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 255):
        if value != version:
            yield Fault("version (0x00)", f"{value} (length word rescaled)", lambda d, v=value: with_version(d, v))
    yield Fault("flags 1 (0x01)", "bit 0 set", lambda d: with_byte(d, 1, d[1] | 0x01))
    yield Fault("flags 1 (0x01)", "bits 1-6 set", lambda d: with_byte(d, 1, d[1] | 0x7E))

    yield from word(
        "file length (0x1A)",
        0x1A,
        {
            "0 (not given, as in old games)": 0,
            "the file's size": size // unit,
            "one unit past the file": size // unit + 1,
            "62 bytes": 62 // unit,
            "64 bytes": 64 // unit,
            "1024 bytes": 1024 // unit,
            "one unit short of the static base": static // unit - (static % unit == 0),
            "the static base": -(-static // unit),
            "the dictionary's start": -(-header_word(data, 0x08) // unit),
            "64 bytes short of the dictionary's end": -(-(dictionary_end - 64) // unit),
            "the dictionary's end": -(-dictionary_end // unit),
        },
    )
    yield Fault("file", "cut to 63 bytes", lambda d: d[:63])
    yield Fault("file", "cut to 64 bytes", lambda d: d[:64])
    yield Fault("file", "cut at half", lambda d: d[: size // 2])
    yield Fault("file", "cut 1 byte short of its length", lambda d: d[: declared - 1])
    yield Fault("file", "cut at its length", lambda d: d[:declared])
    yield Fault("file", "cut at half, length 0", lambda d: with_word(d[: size // 2], 0x1A, 0))
    yield Fault("file", "cut below the static base, length 0", lambda d: with_word(d[: static - 64], 0x1A, 0))

    yield from word(
        "static base (0x0E)",
        0x0E,
        {
            "0": 0,
            "63": 63,
            "64": 64,
            "the object table": header_word(data, 0x0A),
            "the globals + 2": header_word(data, 0x0C) + 2,
            "the high base": header_word(data, 0x04),
            "0xFFFF": 0xFFFF,
        },
    )
    yield from word("high base (0x04)", 0x04, {"0": 0, "0xFFFF": 0xFFFF})
    yield from word("initial PC (0x06)", 0x06, {"0": 0, "the static base": static, "0xFFFF": 0xFFFF})

    yield from word("dictionary (0x08)", 0x08, {"0": 0, "40": 40, "the static base - 2": static - 2, "0xFFFF": 0xFFFF})
    for length in (0, 2, 10, 11, 255):
        yield Fault("dictionary entry length", str(length), lambda d, v=length: with_byte(d, count_at - 1, v))
    yield from word(
        "dictionary entry count",
        count_at,
        {
            "0": 0,
            "negated (unsorted)": 0x10000 - header_word(data, count_at),
            "0x7FFF": 0x7FFF,
        },
    )

    yield from word("object table (0x0A)", 0x0A, {"0": 0, "40": 40, "the static base": static, "0xFFFF": 0xFFFF})
    yield from word(
        "globals (0x0C)",
        0x0C,
        {
            "0": 0,
            "40": 40,
            "the static base - 480 (ends at it)": static - 480,
            "the static base - 478": static - 478,
            "the static base": static,
            "the static base + 100": static + 100,
            "0x8000": 0x8000,
            "0xFFFF": 0xFFFF,
        },
    )
    yield from word("abbreviations (0x18)", 0x18, {"0": 0, "2": 2, "40": 40, "63": 63, "64": 64, "0xFFFF": 0xFFFF})
    if version >= 5:
        yield from word("terminating characters (0x2E)", 0x2E, {"0xFFFF": 0xFFFF})
        yield from word("alphabet table (0x34)", 0x34, {"0xFFFF": 0xFFFF})
        yield from word("header extension (0x36)", 0x36, {"0xFFFF": 0xFFFF})


# -- the children: load a story file as plain Jericho does, or play it through main.py unchecked ---------------------
def play(path: str) -> int:
    """Load `path` in FrotzEnv and use it a little; RAISED when Jericho's Python wrapper raised."""
    import warnings

    warnings.simplefilter("ignore")
    from jericho import FrotzEnv

    try:
        env = FrotzEnv(path, seed=12)
        env.reset()
        for command in PLAYED:
            env.step(command)
        env.get_world_objects(clean=True)
        env.get_dictionary()
        state = env.get_state()
        env.step("look")
        env.set_state(state)
    except Exception as exc:  # noqa: BLE001 - what the wrapper raised is the measurement
        print(f"{type(exc).__name__}: {exc}"[:120])
        return RAISED
    return 0


def play_unchecked(path: str) -> int:
    """`main.py` run as a program with the offline agent for a few turns on `path`, its header check turned off:
    what the check spares the user. An exception is left to print its traceback."""
    from session import story_file

    story_file.check_header = lambda data: None
    with tempfile.TemporaryDirectory() as episodes:
        argv = ["--rom", path, "--agent", "offline", "--critic", "offline", "--max-turns", str(len(PLAYED))]
        sys.argv = ["main.py", *argv, "--episode-dir", episodes, "--no-knowledge", "--quiet"]
        try:
            runpy.run_path(str(ROOT / "main.py"), run_name="__main__")
        except SystemExit as exit_:
            return exit_.code if isinstance(exit_.code, int) else 1
        return 0


def core_outcome(path: Path, timeout: float) -> str:
    """What plain Jericho does with the story file at `path` (see the module's docstring)."""
    return _child_outcome("--play", path, timeout)


def unchecked_outcome(path: Path, timeout: float) -> str:
    """What main.py does with the story file at `path` when the header check is off."""
    return _child_outcome("--unchecked", path, timeout)


def _child_outcome(child: str, path: Path, timeout: float) -> str:
    try:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.studies.story_headers", child, str(path)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return "hangs"
    said = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    if done.returncode == 0:
        return "plays"
    if done.returncode < 0:
        return f"crashes ({signal.Signals(-done.returncode).name})"
    if done.returncode == RAISED and child == "--play":
        return f"raises ({done.stdout.strip()})"
    if any(line.startswith("Traceback") for line in said):
        return f"traceback ({said[-1][:80]})"
    if done.returncode == 2 and said and said[-1].startswith("error: "):
        return "error line"
    return f"exits ({done.returncode}: {said[-1] if said else 'no message'})"


def check_verdict(path: Path) -> str:
    try:
        check_story_bytes(path)
    except StoryFileError as exc:
        return "refused: " + str(exc).replace(str(path), path.name)
    return "accepted"


def broken_rule(path: Path) -> str:
    """The rule of `check_header` the story file at `path` breaks, or "" when it breaks none."""
    try:
        check_header(path.read_bytes())
    except UnplayableStory as exc:
        return exc.rule
    return ""


@dataclass
class Row:
    story: str
    fault: Fault
    core: str
    check: str
    rule: str
    """The rule of the check the copy breaks ("" for none)."""
    unchecked: str = ""
    """What main.py does with the copy when the check is off (measured with --main)."""

    @property
    def failed(self) -> bool:
        """The C core, or main.py unchecked when measured, crashed, hung, exited or gave a traceback."""
        return any(o.startswith(("exits", "crashes", "hangs", "traceback")) for o in (self.core, self.unchecked))

    @property
    def mismatch(self) -> str:
        """`refused, plays` when the C core (and main.py unchecked, when measured) plays a copy the check refuses;
        `let through` when the check accepts a copy that the C core or main.py crashes, hangs or exits on."""
        refused = self.check.startswith("refused")
        outcomes = [self.core, *([self.unchecked] if self.unchecked else [])]
        if refused and all(outcome == "plays" for outcome in outcomes):
            return "refused, plays"
        if not refused and self.failed:
            return "let through"
        return ""


def measure(games: Path, stories: list[str], timeout: float, through_main: bool = False, workers: int = 2) -> list[Row]:
    with tempfile.TemporaryDirectory() as folder:
        jobs: list[tuple[str, Fault, Path]] = []
        for story in stories:
            data = (games / story).read_bytes()
            suffix = Path(story).suffix
            for index, fault in enumerate([Fault("none", "the file as it is", lambda d: d), *faults(data)]):
                path = Path(folder) / f"{Path(story).stem}-{index:02}{suffix}"
                path.write_bytes(fault.craft(data))
                jobs.append((story, fault, path))
        with ThreadPoolExecutor(workers) as pool:
            cores = list(pool.map(lambda job: core_outcome(job[2], timeout), jobs))
            # main.py starts slower than plain Jericho: three times the time before it counts as a hang
            mains = list(pool.map(lambda job: unchecked_outcome(job[2], 3 * timeout), jobs)) if through_main else []
        rows = [
            Row(story, fault, core, check_verdict(path), broken_rule(path))
            for (story, fault, path), core in zip(jobs, cores)
        ]
        for row, unchecked in zip(rows, mains):
            row.unchecked = unchecked
        return rows


@dataclass
class Legal:
    story: str
    check: str
    """What the check says of the story file as it is."""
    without_abbreviations: str = "-"
    """For a game without abbreviations: the check's verdict on its copy with address 0, and its walkthrough."""


def legal_variants(games: Path, timeout: float, workers: int = 2) -> list[Legal]:
    stories = sorted(p for p in games.iterdir() if p.suffix in STORY_SUFFIXES)
    rows = [Legal(p.name, check_verdict(p)) for p in stories]
    with tempfile.TemporaryDirectory() as folder:
        jobs: list[tuple[Legal, Path, Path]] = []
        for row, original in zip(rows, stories):
            data = original.read_bytes()
            if abbreviation_free(data) and header_word(data, 0x18):
                copy = Path(folder) / original.name
                copy.write_bytes(with_word(data, 0x18, 0))
                jobs.append((row, copy, original))
        with ThreadPoolExecutor(workers) as pool:
            played = list(pool.map(lambda job: walkthrough_outcome(job[1], job[2], 10 * timeout), jobs))
        for (row, copy, _), walkthrough in zip(jobs, played):
            row.without_abbreviations = f"{check_verdict(copy)}; walkthrough: {walkthrough}"
    return rows


RULES = ("header", "version", "flags 1", "length", "dictionary", "globals")
"""The rules of `check_header`, in its order (UnplayableStory.rule)."""


def markdown(rows: list[Row], legal: list[Legal], how: str, at: str) -> str:
    """The evidence: per rule, the copies that break it and how many failed; per field, the accepted copies that
    failed; every copy; the legal variants."""
    measured_main = any(row.unchecked for row in rows)
    lines = [
        "# Story-file headers: what crashes, hangs or exits Jericho's C core (benchmarks/studies/story_headers.py)",
        "",
        f"Command: `{how}`  ",
        f"Commit: {at}. Each copy of a real story file has one header field altered; a child process loads it "
        "in plain Jericho (reset, six commands, objects, dictionary, a saved state)"
        + (" and, separately, plays it through main.py with the header check off." if measured_main else "."),
        "",
        "## Rules",
        "",
    ]
    per_rule = []
    for rule in RULES:
        broken = [row for row in rows if row.rule == rule]
        played = [f"{row.story} {row.fault.field} = {row.fault.value}" for row in broken if not row.failed]
        per_rule.append((rule, len(broken), sum(row.failed for row in broken), "; ".join(played) or "-"))
    lines += markdown_table(("rule", "copies refused", "failed (C core or main.py)", "played everywhere"), per_rule)
    let_through = [row for row in rows if row.mismatch == "let through"]
    lines += ["", f"Accepted copies that failed ({len(let_through)}): what a header cannot tell from a legal one.", ""]
    lines += [f"- {row.story} {row.fault.field} = {row.fault.value}: {row.core}" for row in let_through]
    lines += [
        "",
        "## Every copy",
        "",
    ]
    lines += markdown_table(
        ("story", "field", "value", "C core", "main.py, unchecked", "check", ""),
        [
            (row.story, row.fault.field, row.fault.value, row.core, row.unchecked or "-", row.check, row.mismatch)
            for row in rows
        ],
    )
    if legal:
        accepted = sum(row.check == "accepted" for row in legal)
        lines += [
            "",
            "## Legal variants",
            "",
            f"{accepted} of {len(legal)} story files accepted as they are. A game "
            "without abbreviations copied with an abbreviations address of 0: the check's verdict, and its "
            "walkthrough on the copy against the original (`identical N`: all N responses the same).",
            "",
        ]
        lines += markdown_table(
            ("story", "check", "abbreviations address 0"),
            [(row.story, row.check, row.without_abbreviations) for row in legal],
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_games(parser)
    parser.add_argument("--stories", default=",".join(DEFAULT_STORIES), help="comma-separated story files in --games")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds after which a load counts as a hang")
    parser.add_argument("--main", action="store_true", help="also play each copy through main.py, unchecked")
    cli.add_out(parser, help="also write the tables to this markdown file, with the command and commit")
    parser.add_argument("--play", help=argparse.SUPPRESS)  # the children
    parser.add_argument("--unchecked", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.play:
        return play(args.play)
    if args.unchecked:
        return play_unchecked(args.unchecked)
    games, stories = Path(args.games), [s for s in args.stories.split(",") if s]
    missing = [s for s in stories if not (games / s).is_file()]
    if missing:
        return cli.fail(f"no story file named {', '.join(missing)} in {games}")
    rows = measure(games, stories, args.timeout, args.main)
    how = command("benchmarks.studies.story_headers", argv)
    table = markdown(rows, legal_variants(games, args.timeout), how, commit())
    print(table)
    if args.out:
        Path(args.out).write_text(table)
    wrong = [row for row in rows if row.mismatch]
    print(f"{len(rows)} copies: {len(wrong)} where the check and the C core disagree", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
