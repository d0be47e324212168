"""Issue 11: what the LLM path costs per turn, through `main`'s wiring, the real `openai` client and a scripted
OpenAI-compatible server on 127.0.0.1 (`benchmarks/llm_calls.py` prints the same figures)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.llm_calls import TARGET_CALLS_PER_TURN, measure
from benchmarks.scenarios import build_scenario
from tests.local_http import bypass_proxies

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    bypass_proxies(monkeypatch)


def test_the_walkthrough_costs_two_calls_a_turn_and_is_priced(rom_path, walkthrough, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    figures = measure(rom_path, walkthrough, PYPROJECT, tmp_path)
    assert figures["termination_reason"] == "victory"
    assert figures["calls_per_turn"] == {"agent": 1.0, "critic": 1.0}
    assert figures["total_calls_per_turn"] <= TARGET_CALLS_PER_TURN["healthy"]
    assert figures["cost_usd"]["total"] > 0 and set(figures["cost_usd"]) == {"agent", "critic", "total"}
    assert 0 < figures["prompt_chars_per_turn"] < 10_000
    assert "OPENAI_API_KEY" not in os.environ  # the scripted key was for the episode only


@pytest.mark.parametrize("scenario", ["dam_ab", "camp_in_room"])
def test_stuck_play_with_a_stubborn_model_stays_within_target(rom_path, tmp_path, monkeypatch, scenario):
    built = build_scenario(scenario, rom_path)
    figures = measure(rom_path, built.commands, PYPROJECT, tmp_path)
    assert figures["termination_reason"].startswith("stuck")
    assert figures["total_calls_per_turn"] <= TARGET_CALLS_PER_TURN["stuck"]

