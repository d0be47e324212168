"""Loop break on real play: `_run_game_loop` on the real story file with scripted agents (design 000 and 001)."""

from __future__ import annotations

import json

import pytest

from agents.llm_client import LLMClient
from agents.llm_critic import LLMCritic
from agents.looper_agent import LooperAgent
from agents.replay_agent import ReplayAgent
from agents.scripted_llm import ScriptedOpenAI
from managers.objectives import ObjectiveManager
from playthroughs.scenarios import build_scenario
from tests.factories import SEED_LOOP_BREAK, seed_loop_break
from tests.helpers import make_config, run_episode

DAM_EPISODE_TURNS = 341
"""Turns of the stuck episode at zork1's Dam that design 000 starts from (docs/design.md)."""


@pytest.fixture(scope="module")
def scenarios(rom_path):
    names = ["dam_ab", "dam_back_and_forth", "dam_random_walk", "camp_in_room", "take_drop", "puzzle_retry"]
    return {name: build_scenario(name, rom_path) for name in names}


# -- design 000's stuck episode at the Dam ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, detector",
    [
        ("dam_back_and_forth", "region_loop"),
        ("dam_ab", "oscillation"),
        ("dam_random_walk", "region_loop"),
        ("camp_in_room", "camping"),
    ],
)
@pytest.mark.slow  # five long stuck episodes
def test_the_stuck_episode_at_the_dam(rom_path, tmp_path, scenarios, name, detector):
    """Walkthrough to score 40, walk to the Dam, 235 turns in the Dam rooms: terminated exactly no_progress.max_turns
    turns after the last progress, the room-loop detector for the variant fires, and loop break off runs it all."""
    built = scenarios[name]
    config = make_config(tmp_path, loop_break=SEED_LOOP_BREAK)
    result = run_episode(rom_path, config, ReplayAgent(built.commands))
    loop_break = result.summary["loop_break"]
    assert result.summary["termination_reason"] == "stuck_no_progress"
    assert result.summary["turns"] == loop_break["last_progress_turn"] + config.loop_break.no_progress.max_turns
    assert result.summary["turns"] < len(built.commands)
    assert detector in loop_break["detections"]
    assert loop_break["first_detection_turn"][detector] > len(built.prefix)
    [termination] = result.events("stuck_termination")
    assert termination["turns_stuck"] == config.loop_break.no_progress.max_turns

    baseline = run_episode(rom_path, make_config(tmp_path, loop_break={"enabled": False}), ReplayAgent(built.commands))
    assert baseline.summary["turns"] == len(built.commands)
    assert baseline.summary["termination_reason"] == "script_exhausted"
    print(
        f"{name}: prefix {len(built.prefix)} turns, last progress {loop_break['last_progress_turn']}, "
        f"terminated at {result.summary['turns']} "
        f"({detector} first at {loop_break['first_detection_turn'][detector]}); "
        f"saves {DAM_EPISODE_TURNS - result.summary['turns']} turns vs {DAM_EPISODE_TURNS}, "
        f"{baseline.summary['turns'] - result.summary['turns']} vs this scenario without loop break"
    )


@pytest.mark.parametrize("name", ["take_drop", "puzzle_retry"])
def test_in_room_loops_terminate(rom_path, tmp_path, scenarios, name):
    built = scenarios[name]
    config = make_config(tmp_path, loop_break=SEED_LOOP_BREAK)
    result = run_episode(rom_path, config, ReplayAgent(built.commands))
    assert result.summary["termination_reason"] == "stuck_no_progress"
    assert result.summary["turns"] == result.summary["loop_break"]["last_progress_turn"] + 40


# -- healthy play -------------------------------------------------------------------------------------------
def test_healthy_walkthrough_never_terminated(walkthrough_episode):
    """The full walkthrough under defaults: victory, and loop-break adjustments turn < 1 % of its commands from
    accepted into rejected (critic score >= threshold before the adjustments, below after)."""
    result = walkthrough_episode
    loop_break = result.summary["loop_break"]
    assert result.summary["termination_reason"] == "victory"
    assert result.summary["final_score"] == 350
    turned = [e for e in result.events("loop_penalty_applied") if e["turned_to_reject"]]
    assert len(turned) == loop_break["commands_rejected_by_penalties"]
    assert len(turned) / result.summary["turns"] < 0.01
    assert not result.events("stuck_termination")
    print(
        f"walkthrough: {result.summary['turns']} turns, turned to reject by adjustments {len(turned)}, "
        f"would_reject {loop_break['would_reject']} ({loop_break['would_reject'] / result.summary['turns']:.2%}), "
        f"penalties {loop_break['penalties_applied']}, warnings {loop_break['warnings_shown']}"
    )


# -- design 000 integration tests ------------------------------------------------------------------------------
def test_stuck_episode_terminates_early(rom_path, tmp_path):
    """An agent that always proposes failing actions ends as stuck_no_progress, not at max_turns."""
    config = make_config(
        tmp_path,
        gameplay={"max_turns_per_episode": 200},
        loop_break=seed_loop_break({"no_progress": {"max_turns": 20}, "warning_lead_turns": 10}),
    )
    result = run_episode(rom_path, config, ReplayAgent(["open door", "east", "take house"] * 100))
    assert result.summary["termination_reason"] == "stuck_no_progress"
    assert result.summary["turns"] < 200
    assert result.summary["turns"] == result.summary["loop_break"]["last_progress_turn"] + 20


def test_loop_breaks_via_programmatic_penalties(rom_path, tmp_path, scenarios):
    """A stubborn agent shuttling Dam <-> Dam Lobby is steered out by the oscillation penalty."""
    built = scenarios["dam_ab"]
    result = run_episode(rom_path, make_config(tmp_path), LooperAgent(built.prefix, built.loop))
    loop_turns = [r for r in result.records if r["turn"] > len(built.prefix)]
    penalties = [e for e in result.events("loop_penalty_applied") if "Oscillation penalty" in e["reason"]]
    assert penalties and all(e["adjusted_score"] < 0.5 for e in penalties)
    first_penalty = penalties[0]["turn"]
    left = [r for r in loop_turns if r["room_id_after"] not in built.loop_rooms]
    assert left and left[0]["turn"] <= first_penalty + 1
    assert len({r["room_id_after"] for r in loop_turns}) > 2


def test_camping_breaks_via_penalties(rom_path, tmp_path, scenarios):
    """Camping at the Dam: once detected, moves back into it are penalised and the agent goes elsewhere."""
    built = scenarios["dam_ab"]
    loop = ["look", "examine dam", "look", "N", "S"]
    result = run_episode(rom_path, make_config(tmp_path, loop_break=SEED_LOOP_BREAK), LooperAgent(built.prefix, loop))
    camping = [e for e in result.events("loop_penalty_applied") if "Camping penalty" in e["reason"]]
    assert camping, "returning to the camped room must be penalised"
    detected_at, camped = camping[0]["turn"], camping[0]["destination"]

    def visits(first, last):
        return sum(1 for r in result.records if first <= r["turn"] <= last and r["room_id_after"] == camped)

    assert visits(detected_at + 1, detected_at + 10) < visits(detected_at - 9, detected_at)


def test_objective_gaming_cannot_reset_timer(rom_path, tmp_path, scenarios):
    """A critic that proposes objectives and claims to complete them in every verdict while the agent walks in
    circles does not reset the stuck timer: claims on turns that change nothing new are rejected."""
    verdict = json.dumps(
        {
            "score": 0.9,
            "reason": "fine",
            "completed": [
                {"objective": "Reach the Dam Lobby", "evidence": "Dam Lobby"},
                {"objective": "Return to the Dam", "evidence": "Dam"},
                {"objective": "Look around", "evidence": "You are"},
            ],
            "new_objectives": ["Reach the Dam Lobby", "Return to the Dam", "Look around"],
        }
    )
    built = scenarios["dam_ab"]
    config = make_config(tmp_path, loop_break=SEED_LOOP_BREAK)
    client = LLMClient(config.llm, "k", 3, client=ScriptedOpenAI(lambda messages: verdict))
    objectives = ObjectiveManager(config.loop_break, "llm")
    result = run_episode(
        rom_path,
        config,
        ReplayAgent(built.commands),
        LLMCritic(client, config.llm),
        llm_client=client,
        objectives=objectives,
    )
    assert result.summary["termination_reason"] == "stuck_no_progress"
    last_progress = result.summary["loop_break"]["last_progress_turn"]
    assert result.summary["turns"] == last_progress + config.loop_break.no_progress.max_turns
    late_claims = [c for c in objectives.completed_objectives if c["completed_turn"] > len(built.prefix) + 2]
    assert late_claims == []
    assert any(r["objectives_added"] for r in result.records)  # the critic did review


def test_lookahead_prediction_leaves_play_unchanged(rom_path, tmp_path, scenarios):
    """`destination_prediction = "lookahead"` runs proposals on a snapshot and restores it (RNG included):
    the game responses and world states are identical to a run with map prediction."""
    built = scenarios["dam_random_walk"]
    runs = {}
    for mode in ("map", "lookahead"):
        config = make_config(tmp_path / mode, loop_break={"destination_prediction": mode})
        runs[mode] = run_episode(rom_path, config, ReplayAgent(built.commands))
    assert runs["lookahead"].events("loop_penalty_applied"), "lookahead must have been exercised"
    for key in ("response", "world_hash_after", "score_after", "room_id_after"):
        assert [r[key] for r in runs["map"].records] == [r[key] for r in runs["lookahead"].records]


# -- flags switch behaviour on real play ---------------------------------------------------------------------
def test_master_switch_off_runs_the_loop_to_the_end(rom_path, tmp_path, scenarios):
    built = scenarios["dam_ab"]
    config = make_config(tmp_path, loop_break={"enabled": False})
    result = run_episode(rom_path, config, LooperAgent(built.prefix, built.loop))
    assert result.summary["termination_reason"] == "max_turns"
    assert not result.events("loop_penalty_applied") and not result.events("loop_break_warning")


def test_loop_detection_off_still_terminates(rom_path, tmp_path, scenarios):
    built = scenarios["dam_ab"]
    config = make_config(tmp_path, loop_break={"room_loops": {"enabled": False}})
    result = run_episode(rom_path, config, ReplayAgent(built.commands))
    assert result.summary["loop_break"]["detections"] == {}
    assert not result.events("loop_penalty_applied")
    assert result.summary["termination_reason"] == "stuck_no_progress"


def test_stuck_check_interval_ten_reproduces_seed(rom_path, tmp_path, scenarios):
    built = scenarios["dam_ab"]
    config = make_config(tmp_path, loop_break=seed_loop_break({"stuck_check_interval": 10}))
    result = run_episode(rom_path, config, ReplayAgent(built.commands))
    turns = result.summary["turns"]
    assert turns % 10 == 0
    assert 40 <= turns - result.summary["loop_break"]["last_progress_turn"] < 50
