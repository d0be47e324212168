"""The command-line pieces the benchmarks share. Each `add_*` adds one option to a benchmark's parser with the default
and help it has wherever it appears (a benchmark passes its own where they differ, e.g. `add_jobs(parser, help=...)`);
`set_overrides`, `numbers` and `story_path` read what they give, and `fail` prints the one error line a benchmark
ends with when its input is wrong.

A benchmark's `main(argv)` builds its parser from these, so the same option reads the same way in every command."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from session.config import ConfigError
from session.story_file import resolve_story_file

CONFIG = "pyproject.toml"
"""`--config`: the configuration a benchmark plays under."""
STORY_FOLDER = "../shared/games"
"""`--games`: the shared corpus of story files, beside the project."""
TRAJECTORY_CACHE = "benchmarks/results/cache"
"""`--cache`: where built trajectories are kept (playthroughs.trajectory_cache)."""
ZORK1 = "games/zork1.z5"
"""`--rom`: the story file when neither `--rom` nor $ZORK_ROM names one."""
JOBS = 2
"""`--jobs`: games played at once, each in a process of its own."""


def add_config(parser: argparse.ArgumentParser, **options) -> None:
    parser.add_argument("--config", **{"default": CONFIG, **options})


def add_set(parser: argparse.ArgumentParser, **options) -> None:
    """`--set SECTION.KEY=VALUE`, as every benchmark that plays or replays under a configuration takes it (read with
    `set_overrides`)."""
    parser.add_argument(
        "--set",
        **{
            "action": "append",
            "default": [],
            "metavar": "SECTION.KEY=VALUE",
            "help": "override a config key, e.g. --set loop_break.enabled=false or loop_break.churn.changes=0",
            **options,
        },
    )


def set_overrides(pairs: list[str]) -> dict:
    """The configuration overrides `--set SECTION.KEY=VALUE` gives: {section: {key: value}}, a value read as JSON or
    else as a bare word. A pair without a section or a value is a ConfigError."""
    overrides: dict[str, dict] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        section, _, name = key.partition(".")
        if not section or not name or not _:
            raise ConfigError(f"--set {pair}: expected SECTION.KEY=VALUE")
        try:
            overrides.setdefault(section, {})[name] = json.loads(value)
        except json.JSONDecodeError:
            overrides.setdefault(section, {})[name] = value  # a bare word, e.g. gate_action=terminate
    return overrides


def add_games(parser: argparse.ArgumentParser, **options) -> None:
    """`--games`: a folder of story files (the shared corpus unless the benchmark requires one)."""
    default = {} if options.get("required") else {"default": STORY_FOLDER}
    parser.add_argument("--games", **{**default, "help": "folder of story files", **options})


def add_only(parser: argparse.ArgumentParser, **options) -> None:
    parser.add_argument("--only", **{"help": "comma-separated story names (file stems) to run", **options})


def add_out(parser: argparse.ArgumentParser, **options) -> None:
    parser.add_argument("--out", **options)


def add_records(parser: argparse.ArgumentParser, **options) -> None:
    """`--records`: a folder where every episode's records are kept, for benchmarks.margins to replay."""
    parser.add_argument("--records", **{"help": "keep every episode's records in this folder", **options})


def add_cache(parser: argparse.ArgumentParser, **options) -> None:
    parser.add_argument(
        "--cache", **{"default": TRAJECTORY_CACHE, "help": "where built trajectories are kept", **options}
    )


def add_jobs(parser: argparse.ArgumentParser, **options) -> None:
    parser.add_argument(
        "--jobs", **{"type": int, "default": JOBS, "help": "games played in parallel (processes)", **options}
    )


def add_rom(parser: argparse.ArgumentParser, **options) -> None:
    """`--rom`: one story file, read with `story_path`."""
    parser.add_argument("--rom", **{"help": f"story file (default: $ZORK_ROM, then {ZORK1})", **options})


def story_path(rom: str | None) -> Path:
    """The story file `--rom` names, else $ZORK_ROM's, else ZORK1; a StoryFileError when there is none."""
    return resolve_story_file(rom, ZORK1)


def add_trajectory_options(parser: argparse.ArgumentParser, seeds: str = "--seeds") -> None:
    """The corpus's trajectories: noisy walkthroughs' detours per step (`--factors`) and seeds (`seeds`, the option's
    name), and where a stuck loop's walkthrough prefix stops (`--cuts`), each comma-separated."""
    parser.add_argument("--factors", default="1,2,3", help="noisy: detours per step")
    parser.add_argument(seeds, default="1", help="noisy: seeds")
    parser.add_argument("--cuts", default="0.25,0.5,0.75", help="stuck: where the walkthrough prefix stops")


def numbers(text: str, kind: type = int) -> list:
    """`1,2,3` as numbers of `kind`, for an option's `type` (argparse turns a ValueError into a usage error, exit 2)."""
    return [kind(value) for value in text.split(",")]


def fractions(text: str) -> list[float]:
    """`0.25,0.5` as floats, for an option's `type`."""
    return numbers(text, float)


def fail(problem: object) -> int:
    """The one line a benchmark prints when its input is wrong (`error: ...` on stderr), and its exit status, 2."""
    print(f"error: {problem}", file=sys.stderr)
    return 2
