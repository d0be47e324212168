"""main.main: clear errors for a missing story file and a bad config (exit 2), and short real CLI runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import main
from session.records import SUMMARY_FILE, read_record_dicts, read_summary
from session.story_file import ZORK1_MD5
from tests.helpers import PYPROJECT, ROOT, story_file
from tests.local_http import bypass_proxies, closed_port


def run_cli(*args: str) -> int:
    return main.main(["--config", str(PYPROJECT), "--quiet", *args])


def summary_from_stdout(capsys) -> dict:
    out = capsys.readouterr().out.strip().splitlines()
    path = Path(out[-1])
    assert path.name == SUMMARY_FILE and path.is_file()
    return read_summary(path.parent)


def test_missing_story_file(tmp_path, capsys, no_api_key):
    code = run_cli("--rom", "/nonexistent/zork1.z5", "--episode-dir", str(tmp_path))
    err = capsys.readouterr().err
    assert code == main.EXIT_USAGE == 2
    assert "/nonexistent/zork1.z5" in err
    assert "zork1.z5" in err and ZORK1_MD5 in err
    assert "--rom" in err
    assert not any(tmp_path.iterdir())  # nothing was played


def test_missing_story_file_from_environment(tmp_path, capsys, monkeypatch, no_api_key):
    monkeypatch.setenv("ZORK_ROM", str(tmp_path / "nowhere.z5"))
    assert run_cli("--episode-dir", str(tmp_path)) == 2
    err = capsys.readouterr().err
    assert "nowhere.z5" in err and "ZORK_ROM" in err and ZORK1_MD5 in err


def test_not_a_story_file(tmp_path, capsys, no_api_key):
    bogus = tmp_path / "zork1.z5"
    bogus.write_text("not a z-machine file")
    assert run_cli("--rom", str(bogus), "--episode-dir", str(tmp_path / "eps")) == 2
    assert "not a Z-machine story file" in capsys.readouterr().err


def test_unknown_config_key(tmp_path, capsys, rom_path):
    config = tmp_path / "bad.toml"
    config.write_text("[tool.zorkgpt.loop_break]\nbogus_window = 3\n")
    code = main.main(["--config", str(config), "--rom", str(rom_path), "--episode-dir", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "tool.zorkgpt.loop_break.bogus_window" in err
    assert "unknown key" in err and "room_loops" in err


def test_the_viewer_says_when_the_configuration_it_needs_is_invalid(tmp_path, capsys, monkeypatch):
    """`main.py view` with no folder reads the episode folder from pyproject.toml: an invalid one is one error line
    and exit 2, never a silent fallback to another folder; with a folder named, the configuration is not needed."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.zorkgpt.files]\nepisode_dirr = 'elsewhere'\n")
    assert main.main(["view", "--port", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "episode_dirr" in err[0] and "main.py view DIR" in err[0]
    assert main.main(["view", str(tmp_path / "none"), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "not a folder" in err and "episode_dirr" not in err


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ("camping_threshold = 50\n", ["camping_threshold (50)", "camping_window (10)"]),
        (
            "oscillation_return_penalty = 0.3\n",
            ["tool.zorkgpt.loop_break.room_loops.oscillation_return_penalty", "0.3"],
        ),
    ],
)
def test_out_of_range_config_value(tmp_path, capsys, rom_path, toml, expected):
    config = tmp_path / "bad.toml"
    config.write_text("[tool.zorkgpt.loop_break.room_loops]\n" + toml)
    code = main.main(["--config", str(config), "--rom", str(rom_path), "--episode-dir", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    for text in expected:
        assert text in err


def test_bad_flag_value(tmp_path, capsys, rom_path):
    assert run_cli("--rom", str(rom_path), "--episode-dir", str(tmp_path), "--max-turns", "0") == 2
    assert "tool.zorkgpt.gameplay.max_turns_per_episode" in capsys.readouterr().err


def test_missing_config_file(tmp_path, capsys, rom_path):
    code = main.main(["--config", str(tmp_path / "nope.toml"), "--rom", str(rom_path), "--quiet"])
    assert code == 2
    assert "config file not found" in capsys.readouterr().err


def test_llm_agent_without_api_key(tmp_path, capsys, rom_path, no_api_key):
    assert run_cli("--agent", "llm", "--rom", str(rom_path), "--episode-dir", str(tmp_path)) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err


def test_replay_without_actions(tmp_path, capsys, rom_path, no_api_key):
    assert run_cli("--agent", "replay", "--rom", str(rom_path), "--episode-dir", str(tmp_path)) == 2
    assert "--actions" in capsys.readouterr().err


def test_replay_actions_file(tmp_path, capsys, rom_path, no_api_key):
    actions = tmp_path / "actions.txt"
    actions.write_text("# a comment\nopen mailbox\n\ntake leaflet\nnorth\n")
    code = run_cli(
        "--agent", "replay", "--actions", str(actions), "--rom", str(rom_path), "--episode-dir", str(tmp_path / "eps")
    )
    assert code == 0
    summary = summary_from_stdout(capsys)
    assert summary["agent"] == "replay" and summary["turns"] == 3
    assert summary["termination_reason"] == "script_exhausted"


def test_without_api_key_auto_picks_offline(tmp_path, capsys, rom_path, no_api_key):
    code = run_cli("--rom", str(rom_path), "--episode-dir", str(tmp_path), "--max-turns", "5")
    assert code == 0
    summary = summary_from_stdout(capsys)
    assert summary["agent"] == "offline" and summary["critic"] == "offline"
    assert summary["turns"] == 5 and summary["termination_reason"] == "max_turns"
    assert summary["llm_calls"] == {}
    assert len(read_record_dicts(tmp_path / summary["episode_id"])) == 5


def test_with_api_key_auto_picks_llm(tmp_path, capsys, rom_path, monkeypatch):
    """auto + key set -> the llm agent and the when_risky critic; a closed port on 127.0.0.1 ends the episode as
    llm_unavailable."""
    bypass_proxies(monkeypatch)
    monkeypatch.setenv("ZORKGPT_TEST_KEY", "test-key")
    port = closed_port()
    config = tmp_path / "llm.toml"
    config.write_text(
        "[tool.zorkgpt.llm]\n"
        f"base_url = 'http://127.0.0.1:{port}/v1'\napi_key_env = 'ZORKGPT_TEST_KEY'\n"
        "max_retries = 0\ntimeout_seconds = 5\n"
    )
    code = main.main(
        [
            "--config",
            str(config),
            "--rom",
            str(rom_path),
            "--episode-dir",
            str(tmp_path / "eps"),
            "--max-turns",
            "5",
            "--quiet",
        ]
    )
    assert code == 3  # an unattended run must not look like a finished episode
    captured = capsys.readouterr()
    assert "the LLM became unavailable" in captured.err
    summary = read_summary(Path(captured.out.strip().splitlines()[-1]).parent)
    assert summary["agent"] == "llm" and summary["critic"] == "when_risky"
    assert summary["termination_reason"] == "llm_unavailable"
    assert summary["llm_failures"] == {"connection": 3}  # the agent, 3 in a row (objectives ride on the critic)


@pytest.mark.slow  # zork1's whole walkthrough through main.py
def test_walkthrough_cli_reaches_350(tmp_path, capsys, rom_path, no_api_key):
    code = run_cli("--agent", "walkthrough", "--rom", str(rom_path), "--episode-dir", str(tmp_path))
    assert code == 0
    summary = summary_from_stdout(capsys)
    assert summary["final_score"] == 350
    assert summary["termination_reason"] == "victory"
    assert summary["agent"] == "walkthrough"


@pytest.mark.slow  # two main.py processes a game
@pytest.mark.parametrize("game", ["lgop.z3", "sherlock.z5"])
def test_the_offline_agent_knows_the_same_words_in_every_process(game):
    """Jericho's part-of-speech flags for these story files differ from one process to the next (a noun in one run
    is none in the next), so an agent built on them played differently each run. The offline agent reads every
    dictionary word instead: the same in every process."""
    code = (
        "import hashlib,sys;from agents.registry import AGENTS;from session.config import GameConfiguration,RunOptions;"
        "from session.jericho_session import JerichoSession;"
        "agent=AGENTS.get('offline').build(JerichoSession(sys.argv[1]),GameConfiguration(),RunOptions(),None);"
        "print(hashlib.md5(repr(sorted(agent.words)).encode()).hexdigest())"
    )
    root = ROOT
    runs = [
        subprocess.run([sys.executable, "-c", code, str(story_file(game))], capture_output=True, text=True, cwd=root)
        for _ in range(3)
    ]
    assert all(run.returncode == 0 for run in runs), [run.stderr[-500:] for run in runs]
    assert len({run.stdout.strip() for run in runs}) == 1


def test_the_closing_lines_say_what_the_episode_came_to(tmp_path, capsys, no_api_key, rom_path):
    """The closing lines say what the episode came to, not only where summary.json is."""
    code = run_cli("--rom", str(rom_path), "--max-turns", "12", "--episode-dir", str(tmp_path))
    assert code == 0
    *closing, last = capsys.readouterr().out.strip().splitlines()
    summary = read_summary(Path(last).parent)
    folder = Path(last).parent
    assert closing[-4] == (
        f"zork1: score {summary['final_score']} of 350 after 12 turns, {summary['rooms_visited']} rooms; "
        "ended: the turn limit."
    )
    assert closing[-3] == "LLM: no calls (the offline agent and critic)."
    assert closing[-2] == f"Report: {folder / 'report.html'}" and (folder / "report.html").is_file()
    assert closing[-1] == f"Watch and review: uv run python main.py view {tmp_path}"


def test_a_loop_break_stop_says_why(tmp_path, capsys, rom_path):
    actions = tmp_path / "actions.txt"
    actions.write_text("look\n" * 80)
    code = run_cli(
        "--rom", str(rom_path), "--agent", "replay", "--actions", str(actions), "--episode-dir", str(tmp_path)
    )
    assert code == 0
    *closing, last = capsys.readouterr().out.strip().splitlines()
    summary = read_summary(Path(last).parent)
    assert summary["termination_reason"] == "stuck_no_progress" and summary["loop_break"]["stop_why"]
    assert closing[-4].endswith(f"ended: stopped by the loop break: {summary['loop_break']['stop_why']}.")
