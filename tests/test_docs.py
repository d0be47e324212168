"""Every configuration key is documented: in the README's tables and in pyproject.toml."""

from pathlib import Path

import pytest

from session.config import GameConfiguration, markdown_tables

ROOT = Path(__file__).resolve().parents[1]
KEYS = [(section, key) for section, field in GameConfiguration.model_fields.items() for key in field.annotation.model_fields]


@pytest.mark.parametrize("section, key", KEYS)
def test_key_documented(section, key):
    readme = (ROOT / "README.md").read_text()
    assert f"`[tool.zorkgpt.{section}]`" in readme
    assert f"| `{key}` |" in readme, f"README lacks a table row for {section}.{key}"
    field = GameConfiguration.model_fields[section].annotation.model_fields[key]
    assert field.description, f"{section}.{key} has no docstring"


@pytest.mark.parametrize("section, key", [k for k in KEYS if k[0] in ("loop_break", "action_loops")])
def test_loop_break_key_in_pyproject(section, key):
    assert f"\n{key} = " in (ROOT / "pyproject.toml").read_text()


def test_readme_configuration_tables_are_generated_from_the_models():
    """`uv run python -m session.config` prints the tables; the README holds them verbatim."""
    assert markdown_tables() in (ROOT / "README.md").read_text()
