"""A plugin outside the tree: the package `toyplug`, written to a temporary folder that only the subprocesses'
PYTHONPATH names, brings an agent kind, a critic kind, a loop-break detector with its own section, event type and
marker. It plays through main.py (named by `[tool.zorkgpt] plugins` and by `--agent module:attribute`), through
`--resume`, and through `main.py batch` on two spawned workers; a plugin that does not import is one error line and
exit 2. The Ray cluster case is in tests/batch/test_ray_cluster.py (it shares that module's head node)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agents.registry import AGENTS, CRITICS, Kind
from session.config import ConfigError, GameConfiguration
from session.records import EVENTS_FILE, SUMMARY_FILE, read_record_dicts, read_summary

slow = pytest.mark.slow  # main.py in subprocesses

ROOT = Path(__file__).resolve().parents[2]
SUBPROCESS_SECONDS = 180

TOY_COMMANDS = ["open mailbox", "look", "take leaflet", "look", "read leaflet", "look", "north", "look"]
"""What the toy agent plays, in order, then it stops (script exhausted)."""
LOOKS_TO_STOP = 3
"""`[tool.zorkgpt.loop_break.toyplug_looks] limit`: the toy detector ends the episode on the third `look`."""
TURNS_TO_STOP = [turn for turn, command in enumerate(TOY_COMMANDS, start=1) if command == "look"][LOOKS_TO_STOP - 1]
MARKER_COLOUR = "#1a2b3c"

TOYPLUG = {
    "__init__.py": '''
        """A toy plugin of the tests: importing the package registers nothing (its modules do)."""
    ''',
    "agents.py": '''
        """An agent that plays a fixed list of commands, and a critic that approves of everything."""

        from agents.base import Agent, Critic, Proposal, ScriptExhausted
        from agents.registry import Kind
        from session.records import Judgement

        COMMANDS = COMMANDS_GIVEN


        class FixedAgent(Agent):
            kind = "toyplug-fixed"
            forced = True

            def __init__(self):
                self.position = 0

            def resume(self, turns):
                self.position += turns

            def propose(self, context):
                if self.position >= len(COMMANDS):
                    raise ScriptExhausted("toyplug: every command has run")
                self.position += 1
                return Proposal(COMMANDS[self.position - 1], f"toyplug step {self.position}")


        class ApprovingCritic(Critic):
            kind = "toyplug-approving"

            def evaluate(self, command, context):
                return Judgement(0.9, "toyplug approves")


        fixed = Kind("toyplug-fixed", lambda session, config, options, client: FixedAgent())


        def approving(session, config, options, client):
            return ApprovingCritic()
    ''',
    "loops.py": '''
        """A detector that counts `look`s, with its own event type, marker and section."""

        from pydantic import Field

        from managers.loop_break import Detector, register
        from session.config import DetectorSection
        from session.events import emit, register_event_type

        LOOKED = register_event_type("toyplug_looked")


        class LooksConfig(DetectorSection):
            """`[tool.zorkgpt.loop_break.toyplug_looks]`: stop once the player has looked around too often."""

            limit: int = Field(0, ge=0, le=100)
            """`look` commands after which the rule stops the episode (0: off)."""

            @classmethod
            def stop_rule_off(cls):
                return {"limit": 0}


        @register
        class Looks(Detector):
            name = "toyplug_looks"
            config_model = LooksConfig
            stop_rule = "toyplug_looks"
            events = {LOOKED: "toyplug-look"}
            markers = {"toyplug-look": "MARKER_COLOUR"}

            def __init__(self, config, tools):
                super().__init__(config, tools)
                self.looks = 0

            def observe(self, turn):
                if turn.record.command.strip().lower() == "look":
                    self.looks += 1
                    emit(turn.events, LOOKED, "toyplug: looked again", turn=turn.record.turn, looks=self.looks)

            def stop(self, turns_stuck, stretch):
                if self.config.limit and self.looks >= self.config.limit:
                    return f"looked around {self.looks} times"
                return None
    ''',
    "broken.py": """
        raise RuntimeError("the toy plugin's own code fails")
    """,
}


def write_toy_plugin(folder: Path) -> Path:
    """The package `toyplug` in `folder` (outside the tree); `folder`, for PYTHONPATH."""
    package = folder / "toyplug"
    package.mkdir(parents=True, exist_ok=True)
    for name, source in TOYPLUG.items():
        text = textwrap.dedent(source).lstrip()
        text = text.replace("COMMANDS_GIVEN", repr(TOY_COMMANDS)).replace("MARKER_COLOUR", MARKER_COLOUR)
        (package / name).write_text(text)
    return folder


def plugin_config(path: Path, episode_dir: Path, plugins: tuple[str, ...] = ("toyplug.loops",)) -> Path:
    """A configuration file that loads the toy plugin, plays its agent and stops on its detector's rule."""
    path.write_text(
        "[tool.zorkgpt]\n"
        f"plugins = {json.dumps(list(plugins))}\n"
        "[tool.zorkgpt.gameplay]\n"
        'agent = "toyplug.agents:fixed"\ncritic = "offline"\nmax_turns_per_episode = 30\n'
        f"[tool.zorkgpt.files]\nepisode_dir = {json.dumps(str(episode_dir))}\n"
        "[tool.zorkgpt.knowledge]\nenabled = false\n"
        f"[tool.zorkgpt.loop_break.toyplug_looks]\nlimit = {LOOKS_TO_STOP}\n"
    )
    return path


def with_plugin_path(folder: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """An environment whose PYTHONPATH finds the toy plugin (and nothing else outside the tree)."""
    return {**(os.environ if env is None else env), "PYTHONPATH": str(folder)}


def run_main(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "main.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_SECONDS,
    )


def assert_played_by_the_toy_plugin(folder: Path) -> None:
    """The episode in `folder` was played by the toy agent and stopped by the toy detector, which marked its looks."""
    summary, records = read_summary(folder), read_record_dicts(folder)
    assert summary["agent"] == "toyplug-fixed"
    assert [r["command"] for r in records] == TOY_COMMANDS[:TURNS_TO_STOP]
    assert summary["termination_reason"] == "stuck_no_progress"
    assert summary["loop_break"]["stop_rule"] == "toyplug_looks"
    assert summary["loop_break"]["stop_why"] == f"looked around {LOOKS_TO_STOP} times"
    looked = [e for r in records for e in r["events"] if e["event_type"] == "toyplug_looked"]
    assert [e["turn"] for e in looked] == [r["turn"] for r in records if r["command"] == "look"]
    assert [e["looks"] for e in looked] == list(range(1, LOOKS_TO_STOP + 1))
    report = (folder / "report.html").read_text()
    assert MARKER_COLOUR in report and '"kind": "toyplug-look"' in report  # the marker, with its colour


@pytest.fixture(scope="module")
def toyplug(tmp_path_factory) -> Path:
    return write_toy_plugin(tmp_path_factory.mktemp("outside-the-tree"))


def test_the_plugin_is_nowhere_in_this_process(toyplug):
    """The tests below see the plugin only through their subprocesses."""
    assert "toyplug" not in sys.modules
    with pytest.raises(ConfigError, match="cannot import toyplug.loops"):
        GameConfiguration.from_dict({"plugins": ["toyplug.loops"]})


@slow
def test_a_plugin_plays_through_main_and_resumes(toyplug, rom_path, tmp_path):
    config = plugin_config(tmp_path / "plugged.toml", tmp_path / "episodes")
    played = run_main(["--config", str(config), "--rom", str(rom_path), "--quiet"], with_plugin_path(toyplug))
    assert played.returncode == 0, played.stderr
    folder = Path(played.stdout.strip().splitlines()[-1]).parent
    assert_played_by_the_toy_plugin(folder)
    assert json.loads((folder / "episode.json").read_text())["config"]["plugins"] == ["toyplug.loops"]

    # Killed two turns before its end: --resume reads the plugins from episode.json (no --config given) and ends the
    # episode as before.
    whole = (folder / EVENTS_FILE).read_text().splitlines(keepends=True)
    (folder / EVENTS_FILE).write_text("".join(whole[:-2]))
    for written_at_the_end in (SUMMARY_FILE, "map.json", "report.html"):
        (folder / written_at_the_end).unlink(missing_ok=True)
    resumed = run_main(["--resume", str(folder), "--quiet"], with_plugin_path(toyplug))
    assert resumed.returncode == 0, resumed.stderr
    assert_played_by_the_toy_plugin(folder)


@slow
def test_kinds_named_by_path_on_the_command_line(toyplug, rom_path, tmp_path):
    """`--agent` and `--critic` take a module:attribute: a Kind, and a function that builds the critic."""
    flags = ["--rom", str(rom_path), "--episode-dir", str(tmp_path), "--no-knowledge", "--quiet", "--max-turns", "4"]
    kinds = ["--agent", "toyplug.agents:fixed", "--critic", "toyplug.agents:approving"]
    played = run_main([*flags, *kinds], with_plugin_path(toyplug))
    assert played.returncode == 0, played.stderr
    folder = Path(played.stdout.strip().splitlines()[-1]).parent
    summary, records = read_summary(folder), read_record_dicts(folder)
    assert (summary["agent"], summary["critic"]) == ("toyplug-fixed", "toyplug-approving")
    assert [r["command"] for r in records] == TOY_COMMANDS[:4]
    assert {r["critic_reason"] for r in records} == {"toyplug approves"}
    assert not any(e["event_type"] == "toyplug_looked" for r in records for e in r["events"])  # not loaded


@slow
def test_a_plugin_that_does_not_load_is_one_error_line(toyplug, rom_path, tmp_path):
    flags = ["--rom", str(rom_path), "--episode-dir", str(tmp_path / "episodes"), "--quiet"]
    cases = {
        "missing module": (["--config", str(plugin_config(tmp_path / "a.toml", tmp_path, ("toyplug.nonesuch",)))]),
        "failing module": (["--config", str(plugin_config(tmp_path / "b.toml", tmp_path, ("toyplug.broken",)))]),
        "missing attribute": ["--agent", "toyplug.agents:nonesuch"],
        "not a kind": ["--agent", "toyplug.agents:COMMANDS"],
        "no such package": ["--critic", "nonesuch_package.critics:Mine"],
    }
    started = {
        case: subprocess.Popen(
            [sys.executable, "main.py", *flags, *args],
            cwd=ROOT,
            env=with_plugin_path(toyplug),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for case, args in cases.items()
    }
    lines = {}
    for case, run in started.items():
        _, stderr = run.communicate(timeout=SUBPROCESS_SECONDS)
        assert run.returncode == 2 and len(stderr.splitlines()) == 1 and stderr.startswith("error: "), stderr
        lines[case] = stderr.strip()
    assert lines["missing module"].endswith(
        "tool.zorkgpt.plugins: cannot import toyplug.nonesuch (ModuleNotFoundError: No module named 'toyplug.nonesuch')"
    )
    assert lines["failing module"].endswith(
        "tool.zorkgpt.plugins: cannot import toyplug.broken (RuntimeError: the toy plugin's own code fails)"
    )
    assert lines["missing attribute"] == "error: tool.zorkgpt.gameplay.agent: toyplug.agents has no 'nonesuch'"
    assert lines["not a kind"] == (
        "error: tool.zorkgpt.gameplay.agent: toyplug.agents:COMMANDS is neither a Kind nor a callable taking "
        "(session, config, options, client)"
    )
    assert lines["no such package"].startswith("error: tool.zorkgpt.gameplay.critic: cannot import nonesuch_package")
    assert not (tmp_path / "episodes").exists()  # refused before any episode began


@slow
def test_a_batch_imports_the_plugins_in_its_workers(toyplug, rom_path, tmp_path):
    config = plugin_config(tmp_path / "plugged.toml", tmp_path / "unused")
    out = tmp_path / "batch"
    args = ["batch", "--games", str(rom_path), "--seeds", "1,2", "--workers", "2", "--config", str(config), "--quiet"]
    batch = run_main([*args, "--out", str(out)], with_plugin_path(toyplug))
    assert batch.returncode == 0, batch.stderr
    rows = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert sorted(row["seed"] for row in rows) == [1, 2]
    assert {row["status"] for row in rows} == {"finished"}, rows
    assert {row["termination_reason"] for row in rows} == {"stuck_no_progress"}
    folders = [path.parent for path in (out / "episodes").rglob(SUMMARY_FILE)]
    assert len(folders) == 2
    for folder in folders:
        assert_played_by_the_toy_plugin(folder)


# -- in this process: the registry's reading of a path ------------------------------------------------------------
class _FourArguments:
    kind = "four"

    def __init__(self, session, config, options, client):
        self.built = (session, config, options, client)


class _NoArguments:
    kind = "none"


KIND = Kind("by-path", lambda session, config, options, client: _NoArguments())


def test_a_path_names_a_kind_or_a_builder():
    here = __name__
    assert AGENTS.resolve(f"{here}:KIND", None) is KIND
    built = CRITICS.resolve(f"{here}:_FourArguments", None)
    assert (built.name, built.needs_llm, built.needs_actions) == (f"{here}:_FourArguments", False, False)
    assert built.build(1, 2, 3, 4).built == (1, 2, 3, 4)
    with pytest.raises(ConfigError, match="neither a Kind nor a callable taking"):
        AGENTS.resolve(f"{here}:_NoArguments", None)
    with pytest.raises(ConfigError, match=r"tool\.zorkgpt\.gameplay\.critic: .* has no 'nonesuch'"):
        CRITICS.resolve(f"{here}:nonesuch", None)
    config = GameConfiguration.from_dict({"gameplay": {"agent": f"{here}:KIND", "critic": "offline"}})
    assert config.gameplay.agent == f"{here}:KIND"
    with pytest.raises(ConfigError, match=r"tool\.zorkgpt\.gameplay\.agent"):
        GameConfiguration.from_dict({"gameplay": {"agent": "not a:path"}})
    with pytest.raises(ConfigError, match=r"tool\.zorkgpt\.plugins: 'not a module' is not a module name"):
        GameConfiguration.from_dict({"plugins": ["not a module"]})
    with pytest.raises(ConfigError, match=r"tool\.zorkgpt\.plugins: Input should be a valid list"):
        GameConfiguration.from_dict({"plugins": "toyplug"})
