"""docs/configuration.md's tables, generated from the configuration's models (one source of truth): every
`[tool.zorkgpt.*]` table, registered sections included, with each key's default, meaning (its docstring) and range.

`uv run python -m session.config_tables` prints them; tests/docs checks that the page holds them verbatim.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from session.config import GameConfiguration, Section, SectionTable


def all_sections() -> dict[str, type[Section]]:
    """Every table below `[tool.zorkgpt]` by its dotted path (`loop_break.churn`), each table's sections after it."""
    found: dict[str, type[Section]] = {}

    def add(table: type[SectionTable], prefix: str) -> None:
        for name, model in table.section_models().items():
            found[prefix + name] = model
            if issubclass(model, SectionTable):
                add(model, f"{prefix}{name}.")

    add(GameConfiguration, "")
    return found


def markdown_tables() -> str:
    """One Markdown table per `[tool.zorkgpt.*]` section (a detector's section under the loop break's): key, default,
    meaning (the docstring) and allowed range."""
    blocks = [_table("tool.zorkgpt", GameConfiguration)]  # its own keys; its sections follow
    blocks += [_table(f"tool.zorkgpt.{path}", model) for path, model in all_sections().items()]
    return "\n\n".join(blocks) + "\n"


def _table(title: str, model: type[BaseModel]) -> str:
    lines = [f"### `[{title}]`", "", "| key | default | meaning |", "|---|---|---|"]
    for key, info in model.model_fields.items():
        if isinstance(info.annotation, type) and issubclass(info.annotation, Section):
            continue  # a table of its own
        default = info.default_factory() if info.default_factory is not None else info.default
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        shown = f"{len(default)} {extra['counted_as']}" if default and "counted_as" in extra else _toml(default)
        meaning = " ".join((info.description or "").split()).replace("|", "\\|")
        allowed = _allowed(info)
        lines.append(f"| `{key}` | `{shown}` | {meaning}{' Allowed: ' + allowed + '.' if allowed else ''} |")
    return "\n".join(lines)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict) and not value:
        return "{}"
    return str(value)


def _allowed(info: Any) -> str:
    bounds = []
    for item in info.metadata:
        for attribute, symbol in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            value = getattr(item, attribute, None)
            if value is not None:
                bounds.append(f"{symbol} {value}")
    return ", ".join(bounds)


if __name__ == "__main__":
    print(markdown_tables(), end="")
