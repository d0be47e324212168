"""Reading a configuration's tables before they are validated, and the one line its errors are told in.

`[tool.zorkgpt]` comes from a TOML file or a dict, overrides (the command line's flags) go over it, the plugins it
names are imported, a renamed key is refused naming the new one, and the dotted keys of `--set
loop_break.churn.window=12` go into their sections. What is left is the models' to validate (session.config); a
validation error becomes one line naming every key at fault (`describe`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import tomli
from pydantic import BaseModel, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from session.plugins import PluginError, import_modules


class TableError(Exception):
    """Tables that cannot be read as settings (not TOML, a renamed key, a plugin that does not import): one line."""


RENAMED_KEYS: dict[str, str | tuple[str, str]] = {
    "action_loops": "loop_break.action_loops",
    "loop_break.enable_velocity_detection": "loop_break.enabled",
    "loop_break.fruitless_weak_signals": "loop_break.weak_signals",
    "loop_break.stuck_warning_threshold": (
        "loop_break.warning_lead_turns",
        "which counts turns before the earliest stop, not turns without progress: "
        "set it to no_progress.max_turns minus the old value",
    ),
    "loop_break.enable_loop_detection": "loop_break.room_loops.enabled",
    "loop_break.oscillation_return_penalty": "loop_break.room_loops.oscillation_return_penalty",
    "loop_break.oscillation_exploration_bonus": "loop_break.room_loops.oscillation_exploration_bonus",
    "loop_break.camping_return_penalty": "loop_break.room_loops.camping_return_penalty",
    "loop_break.camping_threshold": "loop_break.room_loops.camping_threshold",
    "loop_break.camping_window": "loop_break.room_loops.camping_window",
    "loop_break.enable_location_penalty": "loop_break.room_loops.enable_location_penalty",
    "loop_break.location_revisit_penalty": "loop_break.room_loops.location_revisit_penalty",
    "loop_break.location_revisit_window": "loop_break.room_loops.location_revisit_window",
    "loop_break.region_window": "loop_break.room_loops.region_window",
    "loop_break.region_max_rooms": "loop_break.room_loops.region_max_rooms",
    "loop_break.region_loop_penalty": "loop_break.room_loops.region_loop_penalty",
    "loop_break.repeated_move_penalty": "loop_break.room_loops.repeated_move_penalty",
    "loop_break.way_out_bonus": "loop_break.room_loops.way_out_bonus",
    "loop_break.max_turns_stuck": "loop_break.no_progress.max_turns",
    "loop_break.trek_rooms": "loop_break.no_progress.trek_rooms",
    "loop_break.trek_extra_turns": "loop_break.no_progress.trek_extra_turns",
    "loop_break.trek_grace": "loop_break.no_progress.trek_grace",
    "loop_break.enable_repetition_detection": "loop_break.repetition.enabled",
    "loop_break.repetition_window": "loop_break.repetition.window",
    "loop_break.repetition_misses": "loop_break.repetition.misses",
    "loop_break.repetition_min_turns": "loop_break.repetition.min_turns",
    "loop_break.fruitless_turns": "loop_break.fruitless.turns",
    "loop_break.fruitless_share": "loop_break.fruitless.share",
    "loop_break.churn_changes": "loop_break.churn.changes",
    "loop_break.churn_repeats": "loop_break.churn.repeats",
    "loop_break.churn_window": "loop_break.churn.window",
    "loop_break.churn_min_turns": "loop_break.churn.min_turns",
    "loop_break.cycle_turns": "loop_break.cycle.turns",
    "loop_break.cycle_rounds": "loop_break.cycle.rounds",
    "loop_break.cycle_max_period": "loop_break.cycle.max_period",
}
"""Renamed keys of `[tool.zorkgpt]`, as dotted paths under it: old -> new, or old -> (new, what else changed) when the
value means something else too. A section's path (`action_loops`) stands for every key in it. A configuration that
gives an old key is refused with one line naming the new key (`renamed_message`), never read as the new one: each
setting has one name, and a file that still says the old one is told so instead of quietly meaning something else."""


def read_tables(path: Path) -> dict[str, Any]:
    """`[tool.zorkgpt]` of the TOML file at `path`. A missing file gives {} only when it is the default
    `pyproject.toml`; a named file must exist."""
    if not path.is_file():
        if str(path) != "pyproject.toml":
            raise TableError(f"config file not found: {path}")
        return {}
    try:
        with path.open("rb") as handle:
            data: Any = tomli.load(handle)
    except (tomli.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TableError(f"{path}: not valid TOML (UTF-8): {exc}") from None
    except OSError as exc:
        raise TableError(f"{path}: cannot read: {exc.strerror}") from None
    for key in ("tool", "zorkgpt"):
        data = data.get(key, {})
        if not isinstance(data, dict):
            raise TableError(f"{path}: `{key}` must be a table")
    return data


def merged_tables(data: dict[str, Any], overrides: dict[str, dict[str, Any]], source: str) -> dict[str, Any]:
    """`data` (`[tool.zorkgpt]`) with `overrides` ({section: {key: value}}; None: not given) over it, ready to
    validate: its plugins imported first, a renamed key refused, dotted keys in their sections. A detector's section
    in the overrides goes over the file's key by key."""
    _import_plugins(data, source)
    for tables, what in ((data, "configuration in"), (overrides, "override of")):
        if renamed := renamed_keys_in(tables):
            raise TableError(f"invalid {what} {source}: " + "; ".join(map(renamed_message, renamed)))
    try:
        merged, overrides = _with_sections_nested(data), _with_sections_nested(overrides)
    except ValueError as exc:
        raise TableError(f"invalid configuration in {source}: {exc}") from None
    for section, values in overrides.items():
        if not isinstance(merged.setdefault(section, {}), dict):
            raise TableError(f"invalid configuration in {source}: tool.zorkgpt.{section} must be a table")
        for key, value in values.items():
            if value is None:
                continue
            table = merged[section].get(key)
            nested = section == "loop_break" and isinstance(value, dict) and isinstance(table, dict)
            merged[section][key] = {**table, **value} if nested else value
    return merged


def renamed_keys_in(tables: dict[str, Any]) -> list[str]:
    """The old keys of RENAMED_KEYS that `tables` (`[tool.zorkgpt]`, or overrides of it) gives, in its order."""
    return [path for path in _dotted_paths(tables) if path in RENAMED_KEYS]


def renamed_message(old: str) -> str:
    """`tool.zorkgpt.<old> was renamed to tool.zorkgpt.<new>`, with what else changed when the meaning did."""
    new, hint = (RENAMED_KEYS[old], "") if isinstance(RENAMED_KEYS[old], str) else RENAMED_KEYS[old]
    return f"tool.zorkgpt.{old} was renamed to tool.zorkgpt.{new}" + (f", {hint}" if hint else "")


def describe(exc: ValidationError, source: str, root: type[BaseModel]) -> str:
    """One line, every problem in it: `invalid configuration in F: key: what (got V); key: ...`, where an unknown
    key is told the keys its table takes (`root`: the model of `[tool.zorkgpt]`)."""
    problems = []
    for error in exc.errors():
        key = "tool.zorkgpt." + ".".join(str(part) for part in error["loc"]) if error["loc"] else "tool.zorkgpt"
        if error["type"] == "extra_forbidden":
            allowed = _allowed_keys(root, error["loc"])
            problems.append(f"{key}: unknown key; allowed keys here: {', '.join(allowed)}")
        else:
            got = error.get("input")
            if isinstance(got, str):
                got = without_credentials(got)
            shown = f" (got {_shorten(repr(got))})" if not isinstance(got, dict) else ""
            problems.append(f"{key}: {error['msg']}{shown}")
    return f"invalid configuration in {source}: " + "; ".join(problems)


def without_credentials(url: str) -> str:
    """`url` safe to print: a user name or password in it shown as `***`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(an unreadable URL)"
    if parts.username is None and parts.password is None:
        return url
    return parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2]).geturl()


def _allowed_keys(root: type[BaseModel], loc: tuple) -> list[str]:
    """The keys of the table at `loc` (an error's place, the key itself last), sorted: its fields and, in a table with
    registered sections (session.config.SectionTable), those sections."""
    model = root
    for part in loc[:-1]:
        inner = _sections_of(model).get(str(part))
        if inner is None:
            break
        model = inner
    return sorted({*model.model_fields, *_sections_of(model)})


def _sections_of(model: type[BaseModel]) -> dict[str, type[BaseModel]]:
    section_models = getattr(model, "section_models", None)
    return section_models() if section_models is not None else {}


def located(exc: ValidationError, prefix: tuple[str, ...]) -> list[InitErrorDetails]:
    """`exc`'s errors, each at `prefix` + its own place, to be raised again together with others."""
    return [
        {
            "type": PydanticCustomError(error["type"], error["msg"]),
            "loc": (*prefix, *error["loc"]),
            "input": error["input"],
        }
        for error in exc.errors()
    ]


def _import_plugins(data: dict[str, Any], source: str) -> None:
    """Import the modules `[tool.zorkgpt] plugins` names, before anything they may register is looked for (a
    detector's section, a kind). A list of anything but strings is left to the validation to refuse."""
    plugins = data.get("plugins")
    if not isinstance(plugins, list) or not all(isinstance(name, str) for name in plugins):
        return
    try:
        import_modules(plugins)
    except PluginError as exc:
        raise TableError(f"invalid configuration in {source}: tool.zorkgpt.plugins: {exc}") from None


def _dotted_paths(table: dict[str, Any], prefix: str = "") -> list[str]:
    """Every key of `table` and of the tables inside it, as a dotted path (`loop_break.churn.changes`)."""
    paths = []
    for key, value in table.items():
        paths.append(prefix + str(key))
        if isinstance(value, dict):
            paths += _dotted_paths(value, f"{prefix}{key}.")
    return paths


def _with_sections_nested(data: dict[str, Any]) -> dict[str, Any]:
    """`[tool.zorkgpt]` (or overrides of it), copied, with the loop break's dotted keys in their sections."""
    data = {section: dict(values) if isinstance(values, dict) else values for section, values in data.items()}
    if isinstance(data.get("loop_break"), dict):
        data["loop_break"] = _nest_dotted(data["loop_break"])
    return data


def _nest_dotted(values: dict[str, Any]) -> dict[str, Any]:
    """A `[tool.zorkgpt.loop_break]` table with its dotted keys (`churn.changes`, from `--set
    loop_break.churn.changes=6`) put in their sections. ValueError when a key is given both ways."""
    values = {key: dict(value) if isinstance(value, dict) else value for key, value in values.items()}
    for key in [k for k in values if "." in k]:
        section, _, name = key.partition(".")
        table = values.setdefault(section, {})
        if not isinstance(table, dict):
            raise ValueError(f"tool.zorkgpt.loop_break.{section} must be a table")
        if name in table:
            raise ValueError(f"tool.zorkgpt.loop_break.{key} given twice: as a dotted key and in its section")
        table[name] = values.pop(key)
    return values


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
