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
from pathlib import Path

import pytest

from agents.registry import AGENTS, CRITICS, Kind
from session.config import ConfigError, GameConfiguration
from session.records import EVENTS_FILE, SUMMARY_FILE, read_record_dicts, read_summary
from tests.helpers import (
    ROOT,
    TOY_COMMANDS,
    assert_played_by_the_toy_plugin,
    plugin_config,
    write_toy_plugin,
)

slow = pytest.mark.slow  # main.py in subprocesses

SUBPROCESS_SECONDS = 180


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
