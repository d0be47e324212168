"""Design 001's integration tests (docs/design.md): objective-based progress on real play (`_run_game_loop`, real story
file)."""

from __future__ import annotations

import pytest

from agents.looper_agent import LooperAgent
from agents.replay_agent import ReplayAgent
from managers.objectives import ObjectiveManager
from playthroughs.scenarios import build_scenario
from tests.factories import SEED_LOOP_BREAK, seed_loop_break
from tests.helpers import RecordingReplay, make_config, run_episode


@pytest.fixture(scope="module")
def dam_ab(rom_path):
    return build_scenario("dam_ab", rom_path)


SCORE_AND_OBJECTIVES = seed_loop_break({"progress_signals": ["score", "objective"]})


def test_episode_continues_with_objective_completions(rom_path, tmp_path):
    """30 turns without score, an objective completed at turn 31 (walking an unexplored exit) resets the timer;
    20 turns later the warning appears."""
    commands = ["look"] * 30 + ["north"] + ["look"] * 25
    config = make_config(tmp_path, loop_break=SCORE_AND_OBJECTIVES)
    agent = RecordingReplay(commands)
    result = run_episode(rom_path, config, agent)
    assert result.records[30]["objectives_completed"], "walking north from West of House completes an objective"
    assert result.summary["termination_reason"] == "script_exhausted"
    assert "NO PROGRESS for 20 turns" in agent.shown[52]
    assert "NO PROGRESS" not in agent.shown[51]


def test_episode_terminates_without_any_progress(rom_path, tmp_path):
    config = make_config(tmp_path, loop_break=SCORE_AND_OBJECTIVES)
    result = run_episode(rom_path, config, ReplayAgent(["look"] * 60))
    assert result.summary["termination_reason"] == "stuck_no_progress"
    assert result.summary["turns"] == 40


def test_warnings_mention_objectives_when_present(rom_path, tmp_path):
    agent = RecordingReplay(["look"] * 25)
    run_episode(rom_path, make_config(tmp_path, loop_break=SCORE_AND_OBJECTIVES), agent)
    warning = agent.shown[21]
    assert "increase your score or complete an objective" in warning
    assert "Work on the objectives listed above" in warning  # listed once, in the prompt's objectives block


def test_warnings_omit_objectives_when_absent(rom_path, tmp_path):
    config = make_config(tmp_path, loop_break=SCORE_AND_OBJECTIVES)
    agent = RecordingReplay(["look"] * 25)
    objectives = ObjectiveManager(config.loop_break, "llm")  # no LLM critic to propose any
    run_episode(rom_path, config, agent, objectives=objectives)
    warning = agent.shown[21]
    assert "END THIS EPISODE in 20 turns unless you increase your score." in warning
    assert "objective" not in warning.lower()


def test_mixed_progress_scenario(rom_path, tmp_path, walkthrough):
    """Score at turn 4 (egg), an objective at turn 31, score again at turn 64: the episode continues past 75."""
    commands = (
        walkthrough[:4]  # turn 4: take the egg, +5
        + ["look"] * 25
        + ["down", "south"]  # turn 31: "Explore south from Forest Path" completed
        + ["look"] * 30
        + ["east", "open window", "west"]  # turn 64: enter the kitchen, +10
        + ["look"] * 30
    )
    config = make_config(tmp_path, loop_break=SCORE_AND_OBJECTIVES)
    result = run_episode(rom_path, config, ReplayAgent(commands))
    assert result.summary["turns"] == len(commands) > 75
    assert result.summary["termination_reason"] == "script_exhausted"
    progress = {e["turn"]: e["signals"] for e in result.events("progress_detected")}
    assert progress[31] == ["objective"] and progress[64][0] == "score"
    warnings = {e["turn"] for e in result.events("loop_break_warning")}
    assert {25, 52}.issubset(warnings) and 32 not in warnings


def test_objective_completion_after_score_increase(rom_path, tmp_path, walkthrough):
    """Score at turn 4 and an objective at turn 6 each move the last-progress turn."""
    config = make_config(tmp_path, loop_break=SCORE_AND_OBJECTIVES)
    result = run_episode(rom_path, config, ReplayAgent(walkthrough[:4] + ["down", "south"] + ["look"] * 10))
    signals = {e["turn"]: e["signals"] for e in result.events("progress_check")}
    assert "score" in signals[4]
    assert signals[5] == [] and signals[6] == ["objective"]
    assert result.summary["loop_break"]["last_progress_turn"] == 6


def test_the_no_progress_rule_penalties_and_warnings_together(rom_path, tmp_path, dam_ab):
    """The no-progress rule, penalties and the stuck warning together on a stubborn looper, under the designs'
    settings: penalties fire, warnings appear once stuck, and the episode ends exactly no_progress.max_turns after
    the last progress."""
    config = make_config(tmp_path, loop_break=SEED_LOOP_BREAK)
    result = run_episode(rom_path, config, LooperAgent(dam_ab.prefix, dam_ab.loop))
    assert result.events("loop_penalty_applied")
    warnings = result.events("loop_break_warning")
    assert (
        warnings
        and min(w["turns_stuck"] for w in warnings)
        == config.loop_break.no_progress.max_turns - config.loop_break.warning_lead_turns
    )
    assert result.summary["termination_reason"] == "stuck_no_progress"
    assert result.summary["turns"] == result.summary["loop_break"]["last_progress_turn"] + 40
