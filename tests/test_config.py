"""GameConfiguration.from_toml: defaults from pyproject.toml, overrides, and errors naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from session.config import DEFAULT_PROGRESS_SIGNALS, ConfigError, GameConfiguration

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def write_toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "zorkgpt.toml"
    path.write_text(text)
    return path


def test_defaults_load_from_pyproject():
    config = GameConfiguration.from_toml(PYPROJECT)
    assert config.gameplay.max_rejections == 3
    assert config.gameplay.critic_rejection_threshold == 0.5
    assert config.orchestrator.max_consecutive_llm_failures == 3
    assert config.orchestrator.max_invalid_replies == 3
    assert config.llm.api_key_env == "OPENAI_API_KEY"
    assert config.loop_break.progress_signals == DEFAULT_PROGRESS_SIGNALS
    assert config.loop_break.repetition.enabled is True
    assert config.loop_break.room_loops.camping_threshold <= config.loop_break.room_loops.camping_window
    assert config.files.episode_dir == "game_files/episodes"


def test_pyproject_documents_the_model_defaults():
    """pyproject.toml's [tool.zorkgpt] table and the models' defaults say the same thing."""
    assert GameConfiguration.from_toml(PYPROJECT).model_dump() == GameConfiguration().model_dump()


def test_file_values_are_read(tmp_path):
    path = write_toml(
        tmp_path,
        "[tool.zorkgpt.gameplay]\nmax_turns_per_episode = 77\nmax_rejections = 1\n"
        "[tool.zorkgpt.loop_break]\nmax_turns_stuck = 60\ndestination_prediction = 'lookahead'\n",
    )
    config = GameConfiguration.from_toml(path)
    assert config.gameplay.max_turns_per_episode == 77
    assert config.gameplay.max_rejections == 1
    assert config.loop_break.no_progress.max_turns == 60
    assert config.loop_break.destination_prediction == "lookahead"
    assert config.llm.agent_model == "gpt-4o-mini"  # sections and keys not in the file keep their defaults


def test_cli_style_overrides_win_over_the_file(tmp_path):
    path = write_toml(tmp_path, "[tool.zorkgpt.gameplay]\nmax_turns_per_episode = 77\nagent = 'offline'\n")
    overrides = {
        "gameplay": {"max_turns_per_episode": 5, "agent": None, "seed": 3},
        "files": {"episode_dir": str(tmp_path / "eps")},
    }
    config = GameConfiguration.from_toml(path, overrides)
    assert config.gameplay.max_turns_per_episode == 5
    assert config.gameplay.agent == "offline"  # a None override (flag not given) leaves the file's value
    assert config.gameplay.seed == 3
    assert config.files.episode_dir == str(tmp_path / "eps")


def test_unknown_section_key_is_rejected(tmp_path):
    path = write_toml(tmp_path, "[tool.zorkgpt.loop_break]\ncamping_treshold = 5\n")
    with pytest.raises(ConfigError) as caught:
        GameConfiguration.from_toml(path)
    message = str(caught.value)
    assert "tool.zorkgpt.loop_break.camping_treshold: unknown key" in message
    assert "room_loops" in message  # the allowed keys are listed (camping_threshold is in its section)
    assert str(path) in message


def test_unknown_section_is_rejected(tmp_path):
    path = write_toml(tmp_path, "[tool.zorkgpt.gamplay]\nmax_turns_per_episode = 5\n")
    with pytest.raises(ConfigError, match=r"tool\.zorkgpt\.gamplay: unknown key; allowed keys here: .*gameplay"):
        GameConfiguration.from_toml(path)


def test_unknown_override_key_is_rejected():
    with pytest.raises(ConfigError, match=r"tool\.zorkgpt\.gameplay\.max_turn: unknown key"):
        GameConfiguration.from_toml(PYPROJECT, {"gameplay": {"max_turn": 5}})


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        (
            "[tool.zorkgpt.loop_break]\noscillation_return_penalty = 0.3\n",
            r"tool\.zorkgpt\.loop_break\.room_loops\.oscillation_return_penalty: .*less than or equal to 0.*0\.3",
        ),
        (
            "[tool.zorkgpt.loop_break]\ncamping_threshold = 50\n",
            r"camping_threshold \(50\) must be <= camping_window \(10\)",
        ),
        (
            "[tool.zorkgpt.loop_break]\nstuck_warning_threshold = 64\n",
            r"stuck_warning_threshold \(64\) must be >= 1 and < max_turns_stuck \(64\)",
        ),
        (
            "[tool.zorkgpt.loop_break]\nrepetition_min_turns = 70\n",
            r"repetition\.min_turns \(70\) must be <= no_progress\.max_turns \(64\)",
        ),
        (
            "[tool.zorkgpt.gameplay]\ncritic_rejection_threshold = 1.5\n",
            r"tool\.zorkgpt\.gameplay\.critic_rejection_threshold: .*less than or equal to 1",
        ),
        ("[tool.zorkgpt.gameplay]\nagent = 'GPT 4'\n", r"tool\.zorkgpt\.gameplay\.agent: .*pattern"),
        (
            "[tool.zorkgpt.loop_break]\nprogress_signals = ['score', 'luck']\n",
            r"tool\.zorkgpt\.loop_break\.progress_signals\.1",
        ),
        (
            "[tool.zorkgpt.orchestrator]\nmax_consecutive_llm_failures = 0\n",
            r"tool\.zorkgpt\.orchestrator\.max_consecutive_llm_failures: .*greater than or equal to 1",
        ),
    ],
)
def test_out_of_range_values_are_rejected(tmp_path, toml, expected):
    with pytest.raises(ConfigError, match=expected):
        GameConfiguration.from_toml(write_toml(tmp_path, toml))


def test_named_config_file_must_exist(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        GameConfiguration.from_toml(tmp_path / "missing.toml")


def test_default_pyproject_may_be_missing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert GameConfiguration.from_toml("pyproject.toml").model_dump() == GameConfiguration().model_dump()


def test_invalid_toml(tmp_path):
    with pytest.raises(ConfigError, match="not valid TOML"):
        GameConfiguration.from_toml(write_toml(tmp_path, "[tool.zorkgpt.gameplay\n"))


def test_api_key_comes_from_the_configured_variable(monkeypatch):
    config = GameConfiguration.from_toml(PYPROJECT, {"llm": {"api_key_env": "ZORKGPT_TEST_KEY"}})
    monkeypatch.delenv("ZORKGPT_TEST_KEY", raising=False)
    assert config.api_key() is None
    monkeypatch.setenv("ZORKGPT_TEST_KEY", "")
    assert config.api_key() is None
    monkeypatch.setenv("ZORKGPT_TEST_KEY", "sk-test")
    assert config.api_key() == "sk-test"
