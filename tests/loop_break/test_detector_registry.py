"""A detector defined here alone, with its own config section, plays a real zork1 episode and stops it."""

from __future__ import annotations

import pytest
from pydantic import Field, ValidationError

from managers.loop_break import Detector, Events, Stretch, Turn, register, unregister
from managers.loop_break.detector import REGISTRY, stop_rules
from managers.loop_break.loop_break import marked_events
from orchestration.wiring import RunOptions, build_orchestrator
from session.config import ConfigError, DetectorSection, GameConfiguration, LoopBreakConfig, stop_rules_off
from session.events import (
    MARKERS,
    EventType,
    new_event,
    register_event_type,
    register_marker,
    unregister_event_type,
    unregister_marker,
)
from session.records import read_record_dicts, read_summary
from tests.helpers import detector_config_file
from viewer.episodes import load_episode


class ToyConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.toy]`: stop once the player has looked around too often."""

    looks: int = Field(5, ge=0, le=100)
    """`look` commands after which the toy rule stops the episode (0: off)."""

    @classmethod
    def stop_rule_off(cls) -> dict:
        return {"looks": 0}


class Toy(Detector):
    name = "toy"
    config_model = ToyConfig
    stop_rule = "toy"
    events = {EventType.LOOP_DETECTED: "detection"}
    config: ToyConfig

    def __init__(self, config: ToyConfig, tools):
        super().__init__(config, tools)
        self.looks = 0

    def observe(self, turn: Turn) -> Events:
        if turn.record.command.strip().lower() != "look":
            return ()
        self.looks += 1
        return (new_event(EventType.LOOP_DETECTED, "toy: looked again", turn=turn.record.turn, kind="toy"),)

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        if self.config.looks and self.looks >= self.config.looks:
            return f"looked around {self.looks} times"
        return None

    def turns_to_stop(self, turns_stuck: int, stretch: Stretch) -> int | None:
        return max(0, self.config.looks - self.looks) if self.config.looks else None


@pytest.fixture
def toy():
    register(Toy)
    yield Toy
    unregister(Toy.name)


def test_a_toy_detector_from_this_module_alone_stops_a_real_episode(toy, tmp_path, rom_path):
    config = GameConfiguration.from_toml(detector_config_file(tmp_path, "toy", "looks = 3"))
    assert config.loop_break.toy.looks == 3
    actions = tmp_path / "actions.txt"
    actions.write_text("open mailbox\nlook\nread leaflet\nlook\nlook\nlook\nnorth\n")
    orchestrator = build_orchestrator(config, RunOptions(rom=str(rom_path), actions=str(actions), quiet=True))
    assert list(orchestrator.loop_break.detectors)[-1] == "toy"
    summary_path = orchestrator.play_episode()

    summary = read_summary(summary_path.parent)
    assert summary["termination_reason"] == "stuck_no_progress"
    assert summary["turns"] == 5
    assert summary["loop_break"]["stop_rule"] == "toy"
    assert summary["loop_break"]["stop_why"] == "looked around 3 times"
    records = read_record_dicts(summary_path.parent)
    [stop] = [e for e in records[-1]["events"] if e["event_type"] == "stuck_termination"]
    assert (stop["rule"], stop["why"]) == ("toy", "looked around 3 times")
    # the viewer marks what the toy declared
    marks = [m for turn in load_episode(summary_path.parent)["turns"] for m in turn["marks"]]
    assert any(m["type"] == "loop_detected" and "toy" in m["text"] for m in marks)


def test_the_toy_section_validates_and_is_documented(toy, tmp_path):
    with pytest.raises(ConfigError, match=r"tool\.zorkgpt\.loop_break\.toy\.looks"):
        GameConfiguration.from_toml(detector_config_file(tmp_path, "toy", "looks = -1"))
    with pytest.raises(ConfigError, match=r"loop_break\.toy\.bogus: unknown key"):
        GameConfiguration.from_toml(detector_config_file(tmp_path, "toy", "bogus = 1"))
    assert GameConfiguration().loop_break.toy.looks == 5
    assert stop_rules_off()["toy"] == {"looks": 0}
    assert LoopBreakConfig(**stop_rules_off()).toy.looks == 0
    assert stop_rules()[-1] == "toy"
    assert marked_events()["loop_detected"] == "detection"


def test_unregistering_the_toy_leaves_the_built_in_ones(toy):
    unregister(Toy.name)
    assert "toy" not in REGISTRY and "toy" not in LoopBreakConfig.model_fields
    with pytest.raises(ConfigError, match="unknown key"):
        GameConfiguration.from_dict({"loop_break": {"toy": {"looks": 3}}})
    assert list(REGISTRY) == [
        "action_loops",
        "room_loops",
        "no_progress",
        "repetition",
        "fruitless",
        "churn",
        "cycle",
        "obstacle",
        "refused_again",
    ]


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="registered already"):
        register(type("Churn", (Detector,), {"name": "churn", "config_model": ToyConfig}))


def test_the_toy_section_is_no_field_of_the_model(toy, tmp_path):
    """A registered section lives beside the model's fields (validated by its own model), never among them."""
    assert "toy" not in LoopBreakConfig.model_fields and "toy" not in GameConfiguration.model_fields
    with pytest.raises(ConfigError) as error:
        GameConfiguration.from_toml(detector_config_file(tmp_path, "toy", "bogus = 1\nlooks = -1"))
    message = str(error.value)
    assert "loop_break.toy.bogus: unknown key; allowed keys here: looks" in message
    assert "loop_break.toy.looks: Input should be greater than or equal to 0" in message
    with pytest.raises(ConfigError, match=r"loop_break\.nonesuch: unknown key; allowed keys here: .*\btoy\b"):
        GameConfiguration.from_dict({"loop_break": {"nonesuch": {}}})
    config = GameConfiguration.from_toml(detector_config_file(tmp_path, "toy", "looks = 2"))
    assert config.model_dump()["loop_break"]["toy"] == {"looks": 2}  # what episode.json keeps for --resume
    assert GameConfiguration.from_dict(config.model_dump(mode="json")) == config
    assert config.loop_break.sections()["toy"] == ToyConfig(looks=2)
    config.loop_break.toy = {"looks": 4}  # validated as it is set, as a built-in section is
    assert config.loop_break.toy == ToyConfig(looks=4)
    with pytest.raises(ValidationError):
        config.loop_break.toy = {"looks": -1}
    with pytest.raises(ValueError, match="no setting or section 'tyo'"):
        config.loop_break.tyo = {"looks": 4}


def test_a_detector_declares_its_event_types_and_markers():
    def detector(name: str, events: dict, markers: dict | None = None) -> type[Detector]:
        return type(name, (Toy,), {"name": name, "events": events, "markers": markers or {}})

    with pytest.raises(ValueError, match="toy_counted, no registered event type"):
        register(detector("counting", {"toy_counted": "detection"}))
    counted = register_event_type("toy_counted")
    with pytest.raises(ValueError, match="marks its events with toy-count: not a marker"):
        register(detector("counting", {counted: "toy-count"}))
    assert "counting" not in REGISTRY
    register(detector("counting", {counted: "toy-count"}, {"toy-count": "#123456"}))
    try:
        assert marked_events()[counted] == "toy-count" and MARKERS["toy-count"] == "#123456"
        assert new_event(counted, "counted", turn=1) == {"event_type": "toy_counted", "turn": 1}
        with pytest.raises(ValueError, match="unknown event type 'toy_uncounted'"):
            new_event("toy_uncounted", "never registered")
        with pytest.raises(ValueError, match="registered already"):
            register_marker("toy-count", "#654321")
    finally:
        unregister("counting")
        unregister_marker("toy-count")
        unregister_event_type(counted)
