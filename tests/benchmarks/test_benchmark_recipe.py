"""docs/extending.md, "A benchmark", followed on a toy benchmark written here: a module whose `main(argv)` builds its
parser from benchmarks/cli.py, plays the first turns of a zork1 scenario (playthroughs.scenarios) through the wiring
(playthroughs.episodes) and writes its results file with the command and commit (session.provenance)."""

from __future__ import annotations

import importlib.util
import re
import textwrap

import pytest

from session.jericho_session import JerichoSession
from tests.helpers import PYPROJECT

TOY = '''
"""How far the first turns of a zork1 scenario get: the score and the rooms visited, played through the wiring.

    uv run python -m toy_rooms [--rom PATH] [--scenario NAME] [--turns N] [--set KEY=VALUE] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from benchmarks import cli
from playthroughs.episodes import play_trajectory
from playthroughs.scenarios import ScenarioError, build_scenario
from playthroughs.trajectories import Trajectory
from session.config import ConfigError, GameConfiguration
from session.provenance import command, commit
from session.story_file import StoryFileError
from session.tables import markdown_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\\n\\n")[0])
    cli.add_rom(parser)
    parser.add_argument("--scenario", default="healthy_walkthrough")
    parser.add_argument("--turns", type=int, default=12)
    cli.add_config(parser)
    cli.add_set(parser)
    cli.add_out(parser, default="benchmarks/results/toy_rooms")
    args = parser.parse_args(argv)
    try:
        overrides = cli.set_overrides(args.set)
        GameConfiguration.from_toml(args.config, overrides)
        rom = cli.story_path(args.rom)
        built = build_scenario(args.scenario, rom)
    except (ConfigError, ScenarioError, StoryFileError) as exc:
        return cli.fail(exc)
    commands = built.commands[: args.turns]
    with tempfile.TemporaryDirectory() as episodes:
        overrides.setdefault("files", {})["episode_dir"] = episodes
        overrides.setdefault("gameplay", {})["max_turns_per_episode"] = len(commands)
        config = GameConfiguration.from_toml(args.config, overrides)
        trajectory = Trajectory(built.spec.game, built.spec.kind, built.name, commands)
        summary, records = play_trajectory(rom, trajectory, config, "forced")
    rows = [(built.name, len(records), summary["final_score"], summary["rooms_visited"], summary["termination_reason"])]
    lines = [
        "# How far the first turns of a zork1 scenario get (toy_rooms)",
        "",
        f"Command: `{command('toy_rooms', argv)}`  ",
        f"Commit: {commit()}",
        "",
        *markdown_table(("scenario", "turns", "score", "rooms visited", "end"), rows),
    ]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "toy_rooms.md").write_text("\\n".join(lines) + "\\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


@pytest.fixture
def toy(tmp_path):
    """The toy benchmark, written to a file of its own and loaded from there, as `benchmarks/<name>.py` is."""
    path = tmp_path / "toy_rooms.py"
    path.write_text(textwrap.dedent(TOY).lstrip())
    spec = importlib.util.spec_from_file_location("toy_rooms", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_toy_benchmark_writes_its_figures_with_the_command_and_commit(toy, rom_path, walkthrough, tmp_path):
    out = tmp_path / "results"
    argv = ["--rom", str(rom_path), "--turns", "12", "--config", str(PYPROJECT), "--out", str(out)]
    assert toy.main(argv) == 0
    written = (out / "toy_rooms.md").read_text().splitlines()
    assert written[2] == f"Command: `uv run python -m toy_rooms {' '.join(argv)}`  "
    assert re.fullmatch(r"Commit: [0-9a-f]{7,40}( \(with uncommitted changes\))?", written[3])
    session = JerichoSession(rom_path)  # plain Jericho: what the first 12 steps of the walkthrough reach
    session.reset()
    views = [session.step(command) for command in walkthrough[:12]]
    rooms = len({view.room_id for view in views} | {session.reset().room_id})
    assert f"| healthy_walkthrough | 12 | {views[-1].score} | {rooms} | max_turns |" in written


def test_the_toy_benchmark_reads_set_into_the_configuration(toy, rom_path, tmp_path, capsys):
    """`--set` is read as every benchmark reads it: a key of the configuration plays, a key it has not is the
    configuration's error line, exit 2, and nothing is written."""
    out = tmp_path / "results"
    played = ["--rom", str(rom_path), "--turns", "3", "--set", "loop_break.enabled=false", "--out", str(out)]
    assert toy.main(played) == 0
    assert "| healthy_walkthrough | 3 |" in (out / "toy_rooms.md").read_text()
    refused = ["--rom", str(rom_path), "--set", "loop_break.no_such_key=1", "--out", str(tmp_path / "refused")]
    assert toy.main(refused) == 2
    (error,) = capsys.readouterr().err.strip().splitlines()
    assert error.startswith("error: ") and "no_such_key" in error
    assert not (tmp_path / "refused").exists()


def test_bad_input_is_one_error_line(toy, rom_path, tmp_path, capsys):
    assert toy.main(["--rom", str(rom_path), "--set", "enabled=false", "--out", str(tmp_path)]) == 2
    assert toy.main(["--rom", str(rom_path), "--scenario", "no_such_scenario", "--out", str(tmp_path)]) == 2
    assert toy.main(["--rom", str(tmp_path / "missing.z5"), "--out", str(tmp_path)]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 3 and all(line.startswith("error: ") for line in errors)
    assert "SECTION.KEY=VALUE" in errors[0] and "unknown scenario 'no_such_scenario'" in errors[1]
    assert not (tmp_path / "toy_rooms.md").exists()
