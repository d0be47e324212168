"""What an emulator's start costs (session/emulator.py): FrotzEnv builds Jericho's action templates on every start,
for `get_valid_actions` alone, which no call the emulators serve reaches; the zygote's emulators build them when
something first asks for them, and they are then Jericho's own."""

from __future__ import annotations

import jericho.jericho
from jericho.template_action_generator import TemplateActionGenerator

from session.emulator import _CALLS, TemplatesOnDemand, build_templates_on_demand


def test_a_frotz_env_builds_its_action_templates_only_when_they_are_asked_for(rom_path, monkeypatch):
    monkeypatch.setattr(jericho.jericho, "TemplateActionGenerator", TemplateActionGenerator)  # Jericho's, after
    build_templates_on_demand()
    env = jericho.jericho.FrotzEnv(str(rom_path))
    on_demand = env.act_gen
    assert isinstance(on_demand, TemplatesOnDemand) and on_demand._built is None
    env.reset()
    env.step("open mailbox")
    assert on_demand._built is None  # playing never asks for them
    jerichos = TemplateActionGenerator(env.bindings)
    assert on_demand.templates == jerichos.templates
    assert on_demand.generate_actions(["mailbox", "leaflet"]) == jerichos.generate_actions(["mailbox", "leaflet"])
    assert isinstance(on_demand._built, TemplateActionGenerator)
    env.close()


def test_no_call_an_emulator_serves_asks_for_valid_actions():
    assert not {"get_valid_actions", "act_gen"} & set(_CALLS)
