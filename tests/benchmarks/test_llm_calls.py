"""What the LLM path costs per turn, through `main`'s wiring, the real `openai` client and a scripted OpenAI-compatible
server on 127.0.0.1 (`benchmarks/llm_calls.py` prints the same figures); the prompts of any corpus game's walkthrough,
and the corpus benchmark's walkthrough through the LLM path."""

from __future__ import annotations

import json
import os

import pytest

from benchmarks import corpus
from benchmarks.llm_calls import TARGET_CALLS_PER_TURN, main
from playthroughs.llm_path import measure
from playthroughs.scenarios import build_scenario
from tests.helpers import PYPROJECT, story_file

pytestmark = [
    pytest.mark.slow,  # walkthroughs through the LLM path over HTTP
    pytest.mark.usefixtures("no_proxy"),  # the scripted server is on 127.0.0.1
]


def test_the_walkthrough_costs_two_calls_a_turn_and_is_priced(rom_path, walkthrough, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    figures = measure(rom_path, walkthrough, PYPROJECT, tmp_path)
    assert figures["termination_reason"] == "victory"
    assert figures["refused_steps"] == 0 and figures["told_then_run"] == 0 and not figures["stopped"]
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


def test_the_prompts_of_any_games_walkthrough_are_shown(capsys):
    assert main(["--show-prompts", "3", "--rom", str(story_file("zork2.z5"))]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("# zork2: the prompts of walkthrough turn 3")
    for heading in ("agent, system message", "agent, user message", "critic, system message", "critic, user message"):
        assert f"**{heading}:**" in shown
    assert main(["--show-prompts", "1", "--rom", "sherlock"]) == 0  # a game's name, found beside ZORK_ROM
    assert "# sherlock: the prompts of walkthrough turn 1" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--show-prompts", "2", "--rom", "lgop"], "lgop.z3 has no Jericho walkthrough"),
        (["--show-prompts", "0", "--rom", "zork2"], "walkthrough has turns 1 to 296"),
        (["--show-prompts", "2", "--rom", "no-such-game"], "no story file, nor a game of that name"),
    ],
)
def test_prompts_that_cannot_be_shown_are_one_error_line(args, message, capsys):
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: ") and message in captured.err
    assert captured.err.count("\n") == 1


def test_the_corpus_plays_the_walkthrough_through_the_llm_path(tmp_path):
    games = str(story_file("zork1.z5").parent)
    out = tmp_path / "corpus"
    args = ["--games", games, "--only", "detective,lgop", "--kinds", corpus.LLM_WALKTHROUGH, "--jobs", "1"]
    assert corpus.main([*args, "--out", str(out), "--cache", str(tmp_path / "cache")]) == 0
    result = json.loads((out / "corpus.json").read_text())
    (row,) = result["runs"]  # lgop has no walkthrough: no row
    assert (row["game"], row["kind"], row["mode"]) == ("detective", corpus.LLM_WALKTHROUGH, "llm")
    assert row["final_score"] == row["clean_score"] == 360 and row["termination_reason"] == "victory"
    assert row["refused_steps"] == 0 and not row["stopped"]
    assert result["summary"]["llm_walkthrough_refused_steps"] == 0
    assert "| detective | victory @ 51 | 360 / 360 | 0 | 0 | 2.00 |" in (out / "corpus.md").read_text()
