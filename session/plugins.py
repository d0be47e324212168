"""Plugins: the user's own modules, imported by name before a configuration is resolved.

`[tool.zorkgpt] plugins = ["my_pkg.zork_plugins"]` names modules that register what the tree does not have (agent
and critic kinds, loop-break detectors, event types and markers) when they are imported; `--agent my_pkg.agents:Mine`
names one object in a module. Both are imported here, by importlib, in whatever process reads the configuration: the
main process, a batch worker, a Ray task and `--resume` alike, so nothing but the configuration carries them.

What a name means is decided where it is used (agents.registry resolves a kind's path): this module only imports.
Every failure is one PluginError line, never a traceback.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from types import ModuleType
from typing import Any

MODULE = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
MODULE_NAME = rf"^{MODULE}$"
"""A module a plugin list may name: `my_pkg.zork_plugins`."""
OBJECT_PATH = rf"^{MODULE}:[A-Za-z_][A-Za-z0-9_]*$"
"""One object of a module: `my_pkg.agents:Mine` (the module, a colon, an attribute of it)."""


class PluginError(Exception):
    """A plugin module that cannot be imported, or a path to an object that is not there. One line, for the user."""


def is_object_path(text: str) -> bool:
    return re.fullmatch(OBJECT_PATH, text) is not None


def import_module(name: str) -> ModuleType:
    """The module `name`, imported (once per process: Python keeps it); PluginError naming it when it does not
    import, whatever it raised on the way (a module that is not there, or its own code failing)."""
    if not re.fullmatch(MODULE_NAME, name):
        raise PluginError(f"{name!r} is not a module name (dotted Python identifiers)")
    try:
        return importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - the plugin's own code may raise anything; the user gets one line
        detail = " ".join(str(exc).split()) or "no message"
        raise PluginError(f"cannot import {name} ({type(exc).__name__}: {detail})") from None


def import_modules(names: Iterable[str]) -> None:
    """Import each module in turn (each registers what it brings)."""
    for name in names:
        import_module(name)


def import_object(path: str) -> Any:
    """The object `module:attribute` names, its module imported first; PluginError when either is missing."""
    if not is_object_path(path):
        raise PluginError(f"{path!r} is not module:attribute (e.g. my_pkg.agents:Mine)")
    module_name, _, attribute = path.partition(":")
    module = import_module(module_name)
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise PluginError(f"{module_name} has no {attribute!r}") from None


def modules_of(plugins: Iterable[str], paths: Iterable[str]) -> list[str]:
    """The modules a configuration imports: its plugins, then the module of each `module:attribute` path among
    `paths` (names that are no path, a registered kind's, are skipped), each once."""
    found = list(plugins) + [path.partition(":")[0] for path in paths if is_object_path(path)]
    return list(dict.fromkeys(found))
