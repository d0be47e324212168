"""GameConfiguration.from_toml: defaults from pyproject.toml, overrides, and errors naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomli
from pydantic import BaseModel

from session.config import DEFAULT_PROGRESS_SIGNALS, ConfigError, GameConfiguration, LoopBreakConfig, layered
from session.config_loading import RENAMED_KEYS, renamed_keys_in
from tests.helpers import DATA, PYPROJECT


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
        "[tool.zorkgpt.loop_break]\ndestination_prediction = 'lookahead'\n"
        "[tool.zorkgpt.loop_break.no_progress]\nmax_turns = 60\n",
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
            "[tool.zorkgpt.loop_break.room_loops]\noscillation_return_penalty = 0.3\n",
            r"tool\.zorkgpt\.loop_break\.room_loops\.oscillation_return_penalty: .*less than or equal to 0.*0\.3",
        ),
        (
            "[tool.zorkgpt.loop_break.room_loops]\ncamping_threshold = 50\n",
            r"camping_threshold \(50\) must be <= camping_window \(10\)",
        ),
        (
            "[tool.zorkgpt.loop_break]\nwarning_lead_turns = 64\n",
            r"warning_lead_turns \(64\) must be < no_progress\.max_turns \(64\)",
        ),
        (
            "[tool.zorkgpt.loop_break.repetition]\nmin_turns = 70\n",
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
    assert config.llm.api_key() is None
    monkeypatch.setenv("ZORKGPT_TEST_KEY", "")
    assert config.llm.api_key() is None
    monkeypatch.setenv("ZORKGPT_TEST_KEY", "sk-test")
    assert config.llm.api_key() == "sk-test"


# -- renamed keys: refused, naming the new key -----------------------------------------------------------------
FLAT_FILE = DATA / "pyproject_flat_loop_break.toml"
"""Every loop-break key flat under its renamed name, each at its default value."""


def nested(path: str, value: object) -> dict:
    """`{"a": {"b": value}}` for the dotted path `a.b`."""
    *tables, key = path.split(".")
    result: dict = {key: value}
    for table in reversed(tables):
        result = {table: result}
    return result


def pop_path(tables: dict, path: str) -> object:
    *parents, key = path.split(".")
    for parent in parents:
        tables = tables[parent]
    return tables.pop(key)


def merge(into: dict, tables: dict) -> None:
    for key, value in tables.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = value


def new_key_of(old: str) -> str:
    new = RENAMED_KEYS[old]
    return new if isinstance(new, str) else new[0]


@pytest.mark.parametrize("old", list(RENAMED_KEYS))
def test_a_renamed_key_is_refused_in_one_line_naming_the_new_key(old):
    with pytest.raises(ConfigError) as caught:
        GameConfiguration.from_dict(nested(old, 1), source="zorkgpt.toml")
    message = str(caught.value)
    assert message.startswith(f"invalid configuration in zorkgpt.toml: tool.zorkgpt.{old} was renamed to ")
    assert f"tool.zorkgpt.{new_key_of(old)}" in message
    assert "\n" not in message


@pytest.mark.parametrize("old", list(RENAMED_KEYS))
def test_every_new_key_of_the_table_is_a_key_of_the_configuration(old):
    model: type[BaseModel] = GameConfiguration
    *tables, key = new_key_of(old).split(".")
    for table in tables:
        model = model.section_models()[table]
    assert key in model.model_fields or key in model.section_models()  # a key, or a whole section


def test_a_key_whose_meaning_changed_says_how_to_convert_it():
    with pytest.raises(ConfigError) as caught:
        GameConfiguration.from_dict({"loop_break": {"stuck_warning_threshold": 56}})
    message = str(caught.value)
    assert "loop_break.stuck_warning_threshold was renamed to tool.zorkgpt.loop_break.warning_lead_turns" in message
    assert "no_progress.max_turns minus the old value" in message


def test_a_renamed_section_refuses_the_keys_inside_it(tmp_path):
    path = write_toml(tmp_path, '[tool.zorkgpt.action_loops]\ngate_action = "terminate"\n')
    with pytest.raises(ConfigError) as caught:
        GameConfiguration.from_toml(path)
    assert str(caught.value).endswith("tool.zorkgpt.action_loops was renamed to tool.zorkgpt.loop_break.action_loops")


def test_an_override_by_a_renamed_key_is_refused():
    """`--set loop_break.max_turns_stuck=40` (benchmarks) over a file that uses the current keys."""
    with pytest.raises(ConfigError) as caught:
        GameConfiguration.from_toml(PYPROJECT, {"loop_break": {"max_turns_stuck": 40}})
    assert str(caught.value) == (
        f"invalid override of {PYPROJECT}: tool.zorkgpt.loop_break.max_turns_stuck was renamed to "
        "tool.zorkgpt.loop_break.no_progress.max_turns"
    )


def test_a_flat_file_is_refused_naming_every_renamed_key_in_it():
    with pytest.raises(ConfigError) as caught:
        GameConfiguration.from_toml(FLAT_FILE)
    message = str(caught.value)
    assert "\n" not in message
    assert sorted(renamed_keys_in(tomli.loads(FLAT_FILE.read_text())["tool"]["zorkgpt"])) == sorted(RENAMED_KEYS)
    for old in RENAMED_KEYS:
        assert f"tool.zorkgpt.{old} was renamed to tool.zorkgpt.{new_key_of(old)}" in message


def test_the_flat_file_with_each_key_at_its_new_name_gives_the_defaults():
    """The table sends every value of the flat file (each at its default) to the key that holds that default: the
    renames are right. The warning's threshold is converted as its hint says (64 - 56 = 8 turns of lead)."""
    tables = tomli.loads(FLAT_FILE.read_text())["tool"]["zorkgpt"]
    moved: dict = {}
    for old in RENAMED_KEYS:
        value = pop_path(tables, old)
        if old == "loop_break.stuck_warning_threshold":
            value = LoopBreakConfig().no_progress.max_turns - value
        merge(moved, nested(new_key_of(old), value))
    merge(moved, tables)
    assert GameConfiguration.from_dict(moved).loop_break == LoopBreakConfig()


def test_pyproject_uses_only_current_keys():
    assert renamed_keys_in(tomli.loads(PYPROJECT.read_text())["tool"]["zorkgpt"]) == []


def test_dotted_override_keys_go_into_their_sections():
    """`--set loop_break.churn.window=12` sets one key of the section; the rest of it stays."""
    loop_break = GameConfiguration.from_toml(PYPROJECT, {"loop_break": {"churn.window": 12}}).loop_break
    assert loop_break.churn.window == 12
    assert loop_break.churn.changes == LoopBreakConfig().churn.changes
    with pytest.raises(ConfigError, match=r"tool\.zorkgpt\.loop_break\.churn\.window given twice"):
        GameConfiguration.from_dict({"loop_break": {"churn.window": 12, "churn": {"window": 10}}})


def test_override_layers_merge_key_by_key_in_order_and_stay_as_they_were():
    base = {"gameplay": {"agent": "offline", "max_turns_per_episode": 10}, "files": {"episode_dir": "a"}}
    given = {"gameplay": {"max_turns_per_episode": 99}, "knowledge": {"enabled": False}}
    merged = layered(base, None, given)
    assert merged == {
        "gameplay": {"agent": "offline", "max_turns_per_episode": 99},
        "files": {"episode_dir": "a"},
        "knowledge": {"enabled": False},
    }
    assert base["gameplay"]["max_turns_per_episode"] == 10 and "knowledge" not in base
    config = GameConfiguration.from_toml(PYPROJECT, merged)
    assert config.gameplay.max_turns_per_episode == 99
