"""docs/extending.md's recipes for a detector, each followed on a toy.

A built-in detector (here): a module of a package whose list imports it, the package imported by name by the
configuration before it validates, as session.config.BUILT_IN_MODULES imports managers.loop_break. The module is the
toy plugin's detector (tests/helpers.py), which counts looks; here no `plugins` key names it. Its section is read from
TOML and its stop rule ends a zork1 episode played through the orchestrator.

A plugin detector: tests/loop_break/test_detector_registry.py (a toy registered from a test module, its section, a
real episode it stops) and tests/session/test_plugins.py (the toy plugin, a module outside the tree, through main.py).
"""

from __future__ import annotations

import sys

import pytest

import session.config
from managers.loop_break import unregister
from managers.loop_break.detector import REGISTRY
from orchestration.wiring import RunOptions, build_orchestrator
from session.config import ConfigError, GameConfiguration
from session.events import unregister_event_type, unregister_marker
from session.records import read_summary
from tests.helpers import detector_config_file, toy_plugin_module

PACKAGE = "toy_built_in"
"""The toy package of detectors, written to a temporary folder."""
PACKAGE_INIT = '''"""Toy detectors, imported in the order of their list, as managers/loop_break imports its own."""

from importlib import import_module

DETECTOR_MODULES = ("looks",)
for _module in DETECTOR_MODULES:
    import_module(f"{__name__}.{_module}")
'''
DETECTOR = "toyplug_looks"


@pytest.fixture
def toy_built_in(tmp_path, monkeypatch):
    """The toy package on the path and among the modules the configuration imports before it validates."""
    package = tmp_path / "code" / PACKAGE
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(PACKAGE_INIT)
    (package / "looks.py").write_text(toy_plugin_module("loops.py"))
    monkeypatch.syspath_prepend(str(package.parent))
    built_in = session.config.BUILT_IN_MODULES
    session.config.BUILT_IN_MODULES = (*built_in, PACKAGE)
    session.config.import_built_ins.cache_clear()
    yield
    session.config.BUILT_IN_MODULES = built_in
    session.config.import_built_ins.cache_clear()
    unregister(DETECTOR)
    unregister_marker("toyplug-look")
    unregister_event_type("toyplug_looked")
    for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
        del sys.modules[name]


def test_a_built_in_detector_section_is_read_without_plugins(toy_built_in, tmp_path):
    assert GameConfiguration().loop_break.toyplug_looks.limit == 0
    config = GameConfiguration.from_toml(detector_config_file(tmp_path, DETECTOR, "limit = 2"))
    assert config.loop_break.toyplug_looks.limit == 2 and config.plugins == []
    with pytest.raises(ConfigError, match=r"tool\.zorkgpt\.loop_break\.toyplug_looks\.limit: .*greater than or equal"):
        GameConfiguration.from_toml(detector_config_file(tmp_path, DETECTOR, "limit = -1"))
    with pytest.raises(ConfigError, match=r"loop_break\.toyplug_looks\.limt: unknown key; allowed keys here: limit"):
        GameConfiguration.from_toml(detector_config_file(tmp_path, DETECTOR, "limt = 2"))
    assert list(REGISTRY)[-1] == DETECTOR  # after the tree's own, imported before it


def test_a_built_in_detector_stops_a_zork1_episode(toy_built_in, tmp_path, rom_path):
    config = GameConfiguration.from_toml(detector_config_file(tmp_path, DETECTOR, "limit = 3"))
    actions = tmp_path / "actions.txt"
    actions.write_text("open mailbox\nlook\nread leaflet\nlook\nlook\nnorth\n")
    orchestrator = build_orchestrator(config, RunOptions(rom=str(rom_path), actions=str(actions), quiet=True))
    summary = read_summary(orchestrator.play_episode().parent)
    assert summary["termination_reason"] == "stuck_no_progress"
    assert summary["turns"] == 5
    assert summary["loop_break"]["stop_rule"] == DETECTOR
    assert summary["loop_break"]["stop_why"] == "looked around 3 times"
